#include "randlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const sgt_locales[3] = {"en", "fr", "de-CH"};

static const char *const words[] = {"san",
                                    "santa",
                                    "sant",
                                    "saint",
                                    "jose",
                                    "José",
                                    "JOSÉ",
                                    "julià",
                                    "lòria",
                                    "new",
                                    "york",
                                    "newark",
                                    "Straße",
                                    "strasse",
                                    "東京",
                                    "東京都",
                                    "北京",
                                    "🍕",
                                    "❤️",
                                    "café",
                                    "cafe",
                                    "CAFÉ",
                                    "zürich",
                                    "zurich",
                                    "ÅNGSTRÖM",
                                    "a",
                                    "ab",
                                    "abc",
                                    "abcd",
                                    "abd",
                                    "x",
                                    "xy",
                                    "de",
                                    "la",
                                    "del",
                                    "o'neil",
                                    "rock&roll",
                                    "ﬁle",
                                    "①②",
                                    "İstanbul",
                                    "σίσυφος",
                                    "ΣΊΣΥΦΟΣ",
                                    "한국어",
                                    "한국",
                                    "naïve",
                                    "naive",
                                    "e\xcc\x81t\xc3\xa9",
                                    "2024",
                                    "10",
                                    "1",
                                    "Ǆemal",
                                    "ß",
                                    "ss",
                                    "s",
                                    "sa",
                                    "spring",
                                    "springfield",
                                    "ab12",
                                    "a-b",
                                    "mañana",
                                    "manana",
                                    "北",
                                    "日本"};
static const char *const seps[] = {" ", "  ", "-", ", ", ". ", "/", " & ", " 🍕 ", "_", ":"};

uint64_t sgt_rand(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

size_t sgt_rand_below(uint64_t *s, size_t n) { return n ? (size_t)(sgt_rand(s) % n) : 0; }

static void *track(sgt_list *l, void *p) {
  if (!p) abort();
  if (l->n_blocks == l->cap_blocks) {
    l->cap_blocks = l->cap_blocks ? l->cap_blocks * 2 : 256;
    l->blocks = realloc(l->blocks, l->cap_blocks * sizeof *l->blocks);
    if (!l->blocks) abort();
  }
  l->blocks[l->n_blocks++] = p;
  return p;
}

const char *sgt_list_text(sgt_list *l, uint64_t *st, size_t max_words) {
  char buf[512];
  size_t o = 0;
  size_t nw = 1 + sgt_rand_below(st, max_words);
  if (sgt_rand_below(st, 8) == 0) o += (size_t)snprintf(buf + o, sizeof buf - o, "%s", "¡");
  for (size_t w = 0; w < nw; w++) {
    if (w)
      o += (size_t)snprintf(buf + o, sizeof buf - o, "%s",
                            seps[sgt_rand_below(st, sizeof seps / sizeof *seps)]);
    o += (size_t)snprintf(buf + o, sizeof buf - o, "%s",
                          words[sgt_rand_below(st, sizeof words / sizeof *words)]);
  }
  if (sgt_rand_below(st, 8) == 0) o += (size_t)snprintf(buf + o, sizeof buf - o, "%s", "!?");
  return track(l, strdup(buf));
}

static const char *const *gen_aliases(sgt_list *l, uint64_t *st, size_t *n) {
  *n = sgt_rand_below(st, 4) == 0 ? 1 + sgt_rand_below(st, 3) : 0;
  const char **a = track(l, calloc(*n ? *n : 1, sizeof *a));
  for (size_t i = 0; i < *n; i++) a[i] = sgt_list_text(l, st, 3);
  return a;
}

void sgt_list_gen(sgt_list *l, size_t n, uint64_t seed) {
  memset(l, 0, sizeof *l);
  uint64_t st = seed;
  l->n = n;
  l->items = track(l, calloc(n ? n : 1, sizeof *l->items));
  size_t *depth = calloc(n ? n : 1, sizeof *depth);
  /* Ids in an order unrelated to generation order, so sorting by id matters. */
  int64_t rank_range = sgt_rand_below(&st, 2) ? 4 : 1000000;
  for (size_t i = 0; i < n; i++) {
    sg_compile_item *it = &l->items[i];
    char id[32];
    snprintf(id, sizeof id, "itm_%016llx", (unsigned long long)sgt_rand(&st));
    it->id = track(l, strdup(id));
    char val[32];
    snprintf(val, sizeof val, "value %zu", i);
    it->value = track(l, strdup(val));
    it->display_value = sgt_list_text(l, &st, 4);
    it->aliases = gen_aliases(l, &st, &it->n_aliases);
    it->rank = (int64_t)sgt_rand_below(&st, (size_t)rank_range) - rank_range / 4;
    depth[i] = 1;
    if (i > 0 && sgt_rand_below(&st, 3) == 0) {
      /* Half the time chain onto the previous item, to reach the depth limit. */
      size_t p = sgt_rand_below(&st, 2) ? i - 1 : sgt_rand_below(&st, i);
      if (depth[p] < SG_MAX_HIERARCHY_DEPTH) {
        it->parent_id = l->items[p].id;
        depth[i] = depth[p] + 1;
      }
    }
    size_t nl = 0;
    sg_item_locale *locs = track(l, calloc(2, sizeof *locs));
    if (sgt_rand_below(&st, 3) == 0) {
      sg_item_locale *x = &locs[nl++];
      x->locale = sgt_rand_below(&st, 4) ? "fr" : "FR";
      if (sgt_rand_below(&st, 2)) x->display_value = sgt_list_text(l, &st, 4);
      if (sgt_rand_below(&st, 3) == 0) x->aliases = gen_aliases(l, &st, &x->n_aliases);
    }
    if (sgt_rand_below(&st, 8) == 0) {
      sg_item_locale *x = &locs[nl++];
      x->locale = "de-CH";
      x->display_value = sgt_list_text(l, &st, 2);
    }
    it->locales = locs;
    it->n_locales = nl;
  }
  free(depth);
}

void sgt_list_free(sgt_list *l) {
  for (size_t i = 0; i < l->n_blocks; i++) free(l->blocks[i]);
  free(l->blocks);
  memset(l, 0, sizeof *l);
}

int sgt_fragment_id(const char *json, size_t len, char *out, size_t cap) {
  static const char pre[] = "{\"itemId\":\"";
  size_t pl = sizeof pre - 1;
  if (len < pl || memcmp(json, pre, pl) != 0) return -1;
  size_t i = pl, o = 0;
  while (i < len && json[i] != '"') {
    if (o + 1 >= cap) return -1;
    out[o++] = json[i++];
  }
  if (i >= len) return -1;
  out[o] = '\0';
  return 0;
}
