/*
 * Brute force of DESIGN.md section 3: for every item, the lowest tier at which the query
 * is a byte prefix of its normalised displayValue (0), of an alias (1), or of the text
 * starting at a later word of either (2); then sort all matches by (tier, rank desc,
 * normalised displayValue bytewise, id) and keep the first 10.
 */
#include "bruteforce.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compiler/normalize.h"

typedef struct {
  char *text;
  size_t len;
} ntext;

typedef struct {
  const sg_compile_item *item;
  const char *display; /* localised, raw */
  ntext dv;
  ntext *aliases;
  size_t n_aliases;
} bf_item;

struct sgt_bf {
  bf_item *items;
  size_t n;
};

static int norm(const char *s, ntext *t) { return sg_normalize(s, strlen(s), &t->text, &t->len); }

sgt_bf *sgt_bf_new(const sg_compile_item *items, size_t n, const char *tag) {
  sgt_bf *bf = calloc(1, sizeof *bf);
  if (!bf) return NULL;
  bf->items = calloc(n ? n : 1, sizeof *bf->items);
  if (!bf->items) {
    free(bf);
    return NULL;
  }
  bf->n = n;
  for (size_t i = 0; i < n; i++) {
    const sg_compile_item *it = &items[i];
    const char *dv = it->display_value ? it->display_value : it->value;
    const char *const *al = it->aliases;
    size_t nal = it->n_aliases;
    for (size_t l = 0; l < it->n_locales; l++) {
      if (strcasecmp(it->locales[l].locale, tag) != 0) continue;
      if (it->locales[l].display_value) dv = it->locales[l].display_value;
      if (it->locales[l].aliases) {
        al = it->locales[l].aliases;
        nal = it->locales[l].n_aliases;
      }
      break;
    }
    bf_item *b = &bf->items[i];
    b->item = it;
    b->display = dv;
    b->aliases = calloc(nal ? nal : 1, sizeof *b->aliases);
    b->n_aliases = nal;
    if (!b->aliases || norm(dv, &b->dv)) {
      sgt_bf_free(bf);
      return NULL;
    }
    for (size_t a = 0; a < nal; a++)
      if (norm(al[a], &b->aliases[a])) {
        sgt_bf_free(bf);
        return NULL;
      }
  }
  return bf;
}

void sgt_bf_free(sgt_bf *bf) {
  if (!bf) return;
  for (size_t i = 0; i < bf->n; i++) {
    free(bf->items[i].dv.text);
    if (bf->items[i].aliases)
      for (size_t a = 0; a < bf->items[i].n_aliases; a++) free(bf->items[i].aliases[a].text);
    free(bf->items[i].aliases);
  }
  free(bf->items);
  free(bf);
}

const char *sgt_bf_display(const sgt_bf *bf, size_t item) { return bf->items[item].display; }

static int is_prefix(const char *q, size_t ql, const char *t, size_t tl) {
  return ql <= tl && memcmp(q, t, ql) == 0;
}

/* Is q a prefix of the text starting at some later word (after a space) of t? */
static int later_word_prefix(const char *q, size_t ql, const ntext *t) {
  for (size_t p = 1; p < t->len; p++)
    if (t->text[p - 1] == ' ' && is_prefix(q, ql, t->text + p, t->len - p)) return 1;
  return 0;
}

typedef struct {
  int tier;
  const bf_item *it;
  size_t idx;
} match;

static int cmp_match(const void *pa, const void *pb) {
  const match *a = pa, *b = pb;
  if (a->tier != b->tier) return a->tier < b->tier ? -1 : 1;
  if (a->it->item->rank != b->it->item->rank) return a->it->item->rank > b->it->item->rank ? -1 : 1;
  size_t la = a->it->dv.len, lb = b->it->dv.len;
  int c = memcmp(a->it->dv.text, b->it->dv.text, la < lb ? la : lb);
  if (c) return c;
  if (la != lb) return la < lb ? -1 : 1;
  return strcmp(a->it->item->id, b->it->item->id);
}

size_t sgt_bf_query(const sgt_bf *bf, const char *nq, size_t len, size_t out[10]) {
  match *m = malloc((bf->n ? bf->n : 1) * sizeof *m);
  if (!m) abort();
  size_t nm = 0;
  for (size_t i = 0; i < bf->n; i++) {
    const bf_item *b = &bf->items[i];
    int tier = -1;
    if (is_prefix(nq, len, b->dv.text, b->dv.len)) tier = 0;
    for (size_t a = 0; tier < 0 && a < b->n_aliases; a++)
      if (is_prefix(nq, len, b->aliases[a].text, b->aliases[a].len)) tier = 1;
    if (tier < 0 && later_word_prefix(nq, len, &b->dv)) tier = 2;
    for (size_t a = 0; tier < 0 && a < b->n_aliases; a++)
      if (later_word_prefix(nq, len, &b->aliases[a])) tier = 2;
    if (tier >= 0) m[nm++] = (match){tier, b, i};
  }
  qsort(m, nm, sizeof *m, cmp_match);
  size_t k = nm < 10 ? nm : 10;
  for (size_t i = 0; i < k; i++) out[i] = m[i].idx;
  free(m);
  return k;
}
