/*
 * Shared by the typo property tests (test_property.c, test_cities.c): random edits of
 * normalised text, and the comparison of one query with the brute force of docs/DESIGN.md
 * §3.1 and §3.2 (items, order, each item's key and highlight).
 */
#include "typocheck.h"

#include <stdio.h>
#include <string.h>

#include "compiler/normalize.h"
#include "compiler/typo.h"
#include "randlist.h"

/* Compares one query with typo budget k against sections 3.1 and 3.2: items, order,
 * each item's (edits, tier) and its highlight. */
int sgt_check_typo(const sg_artifact *art, int loc, const sgt_bf *bf, const sg_compile_item *items,
                   const char *nq, size_t len, unsigned k, sgt_typo_stats *stats) {
  return sgt_check_within(art, loc, bf, items, nq, len, k, NULL, stats);
}

int sgt_check_within(const sg_artifact *art, int loc, const sgt_bf *bf,
                     const sg_compile_item *items, const char *nq, size_t len, unsigned k,
                     const char *within, sgt_typo_stats *stats) {
  size_t want[10];
  unsigned we[10], wt[10];
  size_t nw = sgt_bf_query_k(bf, nq, len, k, want, we, wt);
  sg_query_result got;
  if (!within) {
    sg_artifact_query_k(art, loc, nq, len, k, &got);
  } else {
    sg_within w;
    got.n = 0;
    if (sg_artifact_within(art, within, strlen(within), &w) == 0)
      sg_artifact_query_within(art, loc, nq, len, k, &w, &got);
  }
  stats->queries++;
  if (nw) stats->nonempty++;
  int same = got.n == nw;
  const char *why = "items";
  for (size_t i = 0; same && i < nw; i++) {
    char id[64];
    same = sgt_fragment_id(got.items[i].json, got.items[i].len, id, sizeof id) == 0 &&
           strcmp(id, items[want[i]].id) == 0 && got.items[i].edits == we[i] &&
           got.items[i].tier == wt[i];
    if (we[i] > 0) stats->fuzzy_items++;
    if (wt[i] == 3) stats->tier3_items++;
    if (wt[i] == 4) stats->tier4_items++;
    if (!same) break;
    char dv[2048];
    long dl = sg_fragment_display_value(&got.items[i], dv, sizeof dv);
    same = dl >= 0 && strcmp(dv, sgt_bf_display(bf, want[i])) == 0;
    why = "displayValue";
    if (!same) break;
    uint32_t h[64];
    unsigned hw[64];
    long nh =
        sg_typo_highlight(dv, (size_t)dl, nq, len, got.items[i].edits, got.items[i].tier, h, 32);
    size_t nhw = sgt_bf_highlight(bf, want[i], nq, len, we[i], wt[i], hw, 32);
    same = nh >= 0 && (size_t)nh == nhw;
    for (size_t j = 0; same && j < 2 * nhw; j++) same = h[j] == hw[j];
    why = "highlight";
    if (!same) {
      fprintf(stderr, "highlight of [%s]: got", dv);
      for (long j = 0; j < nh; j++) fprintf(stderr, " [%u,%u)", h[2 * j], h[2 * j + 1]);
      fprintf(stderr, " want");
      for (size_t j = 0; j < nhw; j++) fprintf(stderr, " [%u,%u)", hw[2 * j], hw[2 * j + 1]);
      fprintf(stderr, "\n");
    }
  }
  if (!same) {
    fprintf(stderr, "locale %d k %u within %s query [%.*s]: %s differ; want %zu, got %zu\n", loc, k,
            within ? within : "-", (int)len, nq, why, nw, got.n);
    for (size_t i = 0; i < nw; i++)
      fprintf(stderr, "  want %s e%u t%u\n", items[want[i]].id, we[i], wt[i]);
    for (size_t i = 0; i < got.n; i++)
      fprintf(stderr, "  got  e%u t%u %.*s\n", got.items[i].edits, got.items[i].tier,
              (int)got.items[i].len, got.items[i].json);
    return -1;
  }
  return 0;
}

/* Applies 1 or 2 random edits (insert, delete, substitute, swap) to the code points of
 * nt[0..len) into out; returns the new byte length. The letters come from the list's own
 * vocabulary so some edits recreate other keys. */
size_t sgt_random_edits(const char *nt, size_t len, uint64_t *st, char *out, size_t cap) {
  /* Work on code points as byte ranges. */
  size_t starts[600], n = 0;
  for (size_t i = 0; i < len && n < 599; i++)
    if (((unsigned char)nt[i] >> 6) != 2) starts[n++] = i;
  starts[n] = len;
  static const char *const alphabet[] = {"a", "e", "r", "s", " ", "z", "\xc3\xa9", "\xe6\x9d\xb1",
                                         "o", "n"};
  char buf[2400];
  size_t bl = len < sizeof buf ? len : 0;
  memcpy(buf, nt, bl);
  size_t edits = 1 + sgt_rand_below(st, 2);
  for (size_t e = 0; e < edits && bl > 0; e++) {
    /* recompute code point starts of buf */
    n = 0;
    for (size_t i = 0; i < bl && n < 599; i++)
      if (((unsigned char)buf[i] >> 6) != 2) starts[n++] = i;
    starts[n] = bl;
    size_t at = sgt_rand_below(st, n + 1);
    int op = (int)sgt_rand_below(st, 4);
    char tmp[2400];
    size_t tl = 0;
    const char *ins = alphabet[sgt_rand_below(st, sizeof alphabet / sizeof *alphabet)];
    size_t il = strlen(ins);
    if (op == 0 && bl + il < sizeof tmp) { /* insert before code point at */
      size_t b = starts[at];
      memcpy(tmp, buf, b);
      memcpy(tmp + b, ins, il);
      memcpy(tmp + b + il, buf + b, bl - b);
      tl = bl + il;
    } else if (op == 1 && at < n) { /* delete */
      size_t b = starts[at], c = starts[at + 1];
      memcpy(tmp, buf, b);
      memcpy(tmp + b, buf + c, bl - c);
      tl = bl - (c - b);
    } else if (op == 2 && at < n && bl + il < sizeof tmp) { /* substitute */
      size_t b = starts[at], c = starts[at + 1];
      memcpy(tmp, buf, b);
      memcpy(tmp + b, ins, il);
      memcpy(tmp + b + il, buf + c, bl - c);
      tl = bl - (c - b) + il;
    } else if (at + 1 < n) { /* swap code points at and at + 1 */
      size_t b = starts[at], c = starts[at + 1], d = starts[at + 2];
      memcpy(tmp, buf, b);
      memcpy(tmp + b, buf + c, d - c);
      memcpy(tmp + b + (d - c), buf + b, c - b);
      memcpy(tmp + d, buf + d, bl - d);
      tl = bl;
    } else {
      continue;
    }
    memcpy(buf, tmp, tl);
    bl = tl;
  }
  /* Normalise the result (an edit may create a double space or an edge space). */
  long r = sg_normalize_into(buf, bl, out, cap);
  return r < 0 ? 0 : (size_t)r;
}

size_t sgt_words_query(const char *nt, size_t len, uint64_t *st, char *out, size_t cap) {
  size_t at[64], wl[64], n = 0;
  for (size_t i = 0; i < len && n < 64;) {
    size_t j = i;
    while (j < len && nt[j] != ' ') j++;
    if (j > i) {
      at[n] = i;
      wl[n] = j - i;
      n++;
    }
    i = j + 1;
  }
  if (n == 0 || cap < len + 8) return 0;
  size_t o = 0;
  if (sgt_rand_below(st, 2) == 0 && n >= 2) {
    /* 2..7 of its words (repeats allowed now and then), shuffled, the last cut short. */
    size_t m = 2 + sgt_rand_below(st, 6), idx[8];
    for (size_t i = 0; i < m; i++) idx[i] = i < n ? i : sgt_rand_below(st, n);
    for (size_t i = m; i > 1; i--) {
      size_t j = sgt_rand_below(st, i), t = idx[i - 1];
      idx[i - 1] = idx[j];
      idx[j] = t;
    }
    for (size_t i = 0; i < m; i++) {
      if (idx[i] >= n || o + wl[idx[i]] + 1 >= cap) continue;
      size_t l = wl[idx[i]];
      if (i + 1 == m) {
        l = 1 + sgt_rand_below(st, l);
        while (l < wl[idx[i]] && ((unsigned char)nt[at[idx[i]] + l] >> 6) == 2) l++;
      }
      if (o) out[o++] = ' ';
      memcpy(out + o, nt + at[idx[i]], l);
      o += l;
    }
    return o;
  }
  /* A prefix with its spaces removed, or with a space put in somewhere. */
  size_t pl = 1 + sgt_rand_below(st, len);
  while (pl < len && ((unsigned char)nt[pl] >> 6) == 2) pl++;
  int mode = (int)sgt_rand_below(st, 3);
  size_t space_at = sgt_rand_below(st, pl + 1);
  for (size_t i = 0; i < pl; i++) {
    if (mode == 1 && i == space_at && o && out[o - 1] != ' ' && ((unsigned char)nt[i] >> 6) != 2)
      out[o++] = ' ';
    if (nt[i] == ' ' && mode != 2) continue;
    out[o++] = nt[i];
  }
  while (o && out[o - 1] == ' ') o--;
  return o;
}

long sgt_words_from_input(const sgt_list *l, uint64_t seed, char *nq, long nl, size_t cap) {
  if (nl <= 0 || nq[0] != '1') return nl;
  uint64_t st = seed ^ (uint64_t)nl;
  for (long i = 1; i < nl; i++) st = st * 31 + (unsigned char)nq[i];
  const char *t = l->items[sgt_rand_below(&st, l->n)].display_value;
  char nt[1024];
  long tl = sg_normalize_into(t, strlen(t), nt, sizeof nt);
  size_t wl = tl > 0 ? sgt_words_query(nt, (size_t)tl, &st, nq, cap) : 0;
  return wl ? (long)wl : -1;
}
