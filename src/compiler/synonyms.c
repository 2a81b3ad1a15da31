/*
 * Synonym sets -> extra aliases (synonyms.h, docs/DESIGN.md §3.4).
 *
 * Finding the phrases of a candidate without trying every set: each phrase is indexed by
 * its first word (entries sorted by that word's bytes), so a candidate costs one binary
 * search per word position plus a compare per phrase that starts with that word. The
 * occurrences found are sorted by (set, phrase, position); the first per (set, phrase) is
 * its first occurrence, and walking them in that order gives the results in the order of
 * the rule.
 */
#include "compiler/synonyms.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/normalize.h"

typedef struct {
  char *t; /* normalised, NULL when it normalised to nothing */
  uint32_t len;
} ntext;

typedef struct {
  bool one_way;
  ntext input;
  ntext *phrase;
  size_t n;
} nset;

typedef struct {
  uint32_t set, phrase;
  uint32_t wlen; /* bytes of the phrase's first word */
} entry;

struct sg__synonyms {
  nset *set;
  size_t n;
  entry *e; /* every (set, phrase) that can be replaced, by first word */
  size_t ne;
};

static const ntext *entry_text(const sg__synonyms *sy, const entry *e) {
  return &sy->set[e->set].phrase[e->phrase];
}

static int cmp_word(const char *a, size_t al, const char *b, size_t bl) {
  int c = memcmp(a, b, al < bl ? al : bl);
  if (c) return c;
  return al < bl ? -1 : al > bl;
}

static int cmp_entry(const void *pa, const void *pb, void *ctx) {
  const sg__synonyms *sy = ctx;
  const entry *a = pa, *b = pb;
  int c = cmp_word(entry_text(sy, a)->t, a->wlen, entry_text(sy, b)->t, b->wlen);
  if (c) return c;
  if (a->set != b->set) return a->set < b->set ? -1 : 1;
  return a->phrase < b->phrase ? -1 : a->phrase > b->phrase;
}

static int norm(const char *s, ntext *out) {
  out->t = NULL;
  out->len = 0;
  if (!s) return 0;
  char *t;
  size_t n;
  if (sg_normalize(s, strlen(s), &t, &n)) return -1;
  if (n == 0 || n > UINT32_MAX / 2) {
    free(t);
    return 0;
  }
  out->t = t;
  out->len = (uint32_t)n;
  return 0;
}

void sg__synonyms_free(sg__synonyms *sy) {
  if (!sy) return;
  for (size_t i = 0; i < sy->n; i++) {
    free(sy->set[i].input.t);
    for (size_t j = 0; j < sy->set[i].n; j++) free(sy->set[i].phrase[j].t);
    free(sy->set[i].phrase);
  }
  free(sy->set);
  free(sy->e);
  free(sy);
}

sg__synonyms *sg__synonyms_new(const sg_synonym_set *sets, size_t n) {
  sg__synonyms *sy = calloc(1, sizeof *sy);
  if (!sy || n > UINT32_MAX) goto fail;
  sy->set = calloc(n ? n : 1, sizeof *sy->set);
  if (!sy->set) goto fail;
  sy->n = n;
  size_t total = 0;
  for (size_t i = 0; i < n; i++) {
    nset *x = &sy->set[i];
    x->one_way = sets[i].input != NULL;
    x->phrase = calloc(sets[i].n_phrases ? sets[i].n_phrases : 1, sizeof *x->phrase);
    if (!x->phrase) goto fail;
    x->n = sets[i].n_phrases;
    if (norm(sets[i].input, &x->input)) goto fail;
    for (size_t j = 0; j < x->n; j++)
      if (norm(sets[i].phrases[j], &x->phrase[j])) goto fail;
    total += x->n;
  }
  sy->e = malloc((total ? total : 1) * sizeof *sy->e);
  if (!sy->e) goto fail;
  for (size_t i = 0; i < n; i++) {
    const nset *x = &sy->set[i];
    /* A one-way set without a usable input replaces nothing. */
    if (x->one_way && !x->input.t) continue;
    for (size_t j = 0; j < x->n; j++) {
      const ntext *p = &x->phrase[j];
      if (!p->t) continue;
      const char *sp = memchr(p->t, ' ', p->len);
      sy->e[sy->ne++] = (entry){(uint32_t)i, (uint32_t)j, sp ? (uint32_t)(sp - p->t) : p->len};
    }
  }
  if (sy->ne > 1) qsort_r(sy->e, sy->ne, sizeof *sy->e, cmp_entry, sy);
  return sy;
fail:
  sg__synonyms_free(sy);
  return NULL;
}

/* ---- expansion -------------------------------------------------------------------------- */

typedef struct {
  uint32_t set, phrase, pos;
} occ;

static int cmp_occ(const void *pa, const void *pb) {
  const occ *a = pa, *b = pb;
  if (a->set != b->set) return a->set < b->set ? -1 : 1;
  if (a->phrase != b->phrase) return a->phrase < b->phrase ? -1 : 1;
  return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* The first entry whose first word is >= w[0..wl). */
static size_t lower_bound(const sg__synonyms *sy, const char *w, size_t wl) {
  size_t lo = 0, hi = sy->ne;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const entry *e = &sy->e[mid];
    if (cmp_word(entry_text(sy, e)->t, e->wlen, w, wl) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static bool same(const char *a, size_t al, const char *b, size_t bl) {
  return al == bl && memcmp(a, b, al) == 0;
}

/* Whether t[0..tl) equals a candidate or an earlier result. */
static bool known(const sg__span *cand, size_t n, const sg__synonym_out *out, const char *t,
                  size_t tl) {
  for (size_t i = 0; i < n; i++)
    if (same(cand[i].t, cand[i].len, t, tl)) return true;
  for (size_t i = 0; i < out->n; i++)
    if (same(out->text.data + out->off[i], out->len[i], t, tl)) return true;
  return false;
}

/* Appends c with [pos, pos + len) replaced by r unless it is known. */
static int emit(const sg__span *cand, size_t n, const sg__span *c, uint32_t pos, uint32_t len,
                const ntext *r, sg__synonym_out *out) {
  size_t start = out->text.len;
  if (sg_buf_append(&out->text, c->t, pos) || sg_buf_append(&out->text, r->t, r->len) ||
      sg_buf_append(&out->text, c->t + pos + len, c->len - pos - len))
    return -1;
  size_t tl = out->text.len - start;
  out->text.len = start; /* not yet kept: the compare below must not see it */
  const char *t = out->text.data + start;
  if (tl > UINT32_MAX || start > UINT32_MAX || known(cand, n, out, t, tl)) {
    out->text.data[start] = '\0';
    return 0;
  }
  out->text.len = start + tl;
  out->off[out->n] = (uint32_t)start;
  out->len[out->n] = (uint32_t)tl;
  out->n++;
  return 0;
}

int sg__synonyms_expand(const sg__synonyms *sy, const sg__span *cand, size_t n,
                        sg__synonym_out *out) {
  sg_buf_reset(&out->text);
  out->n = 0;
  if (!sy || sy->ne == 0) return 0;
  occ *o = NULL;
  size_t no = 0, co = 0;
  int rc = -1;
  for (size_t ci = 0; ci < n && out->n < SG_SYNONYM_ALIASES_MAX; ci++) {
    const sg__span *c = &cand[ci];
    no = 0;
    /* Every whole-word occurrence of every indexed phrase, by word position. */
    for (uint32_t p = 0; p < c->len; p++) {
      if (p > 0 && c->t[p - 1] != ' ') continue;
      const char *sp = memchr(c->t + p, ' ', c->len - p);
      uint32_t wl = sp ? (uint32_t)(sp - (c->t + p)) : c->len - p;
      for (size_t k = lower_bound(sy, c->t + p, wl); k < sy->ne; k++) {
        const entry *e = &sy->e[k];
        const ntext *ph = entry_text(sy, e);
        if (!same(ph->t, e->wlen, c->t + p, wl)) break;
        if (ph->len > c->len - p || memcmp(ph->t, c->t + p, ph->len) != 0) continue;
        if (p + ph->len < c->len && c->t[p + ph->len] != ' ') continue;
        if (no == co) {
          size_t nc = co ? co * 2 : 64;
          occ *x = realloc(o, nc * sizeof *x);
          if (!x) goto done;
          o = x;
          co = nc;
        }
        o[no++] = (occ){e->set, e->phrase, p};
      }
    }
    if (no > 1) qsort(o, no, sizeof *o, cmp_occ);
    for (size_t i = 0; i < no && out->n < SG_SYNONYM_ALIASES_MAX; i++) {
      if (i > 0 && o[i].set == o[i - 1].set && o[i].phrase == o[i - 1].phrase) continue;
      const nset *x = &sy->set[o[i].set];
      uint32_t len = x->phrase[o[i].phrase].len;
      if (x->one_way) {
        if (emit(cand, n, c, o[i].pos, len, &x->input, out)) goto done;
        continue;
      }
      for (size_t j = 0; j < x->n && out->n < SG_SYNONYM_ALIASES_MAX; j++) {
        if (j == o[i].phrase || !x->phrase[j].t) continue;
        if (emit(cand, n, c, o[i].pos, len, &x->phrase[j], out)) goto done;
      }
    }
  }
  rc = 0;
done:
  free(o);
  return rc;
}
