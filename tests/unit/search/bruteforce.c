/*
 * Brute force of docs/DESIGN.md §3: for every item, the lowest tier at which the query
 * is a byte prefix of its normalised displayValue (0), of an alias (1), or of the text
 * starting at a later word of either (2); then sort all matches by (tier, rank desc,
 * normalised displayValue bytewise, id) and keep the first 10.
 */
#include "bruteforce.h"

#include <stdint.h>
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
  unsigned char *keep; /* docs/DESIGN.md §3.5: per item, 1 when it passes the within filter */
};

/* Whether item i is a descendant of the filter's item (all items when there is none). */
static int kept(const sgt_bf *bf, size_t i) { return !bf->keep || bf->keep[i]; }

static const sgt_bf *sort_bf;
static int cmp_by_id(const void *a, const void *b) {
  return strcmp(sort_bf->items[*(const size_t *)a].item->id,
                sort_bf->items[*(const size_t *)b].item->id);
}
static void sgt__bf_sort_ids(const sgt_bf *bf, size_t *by) {
  sort_bf = bf;
  qsort(by, bf->n, sizeof *by, cmp_by_id);
}

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

/* §3.5 straight from the text: an item is kept when the id is among its ancestors, found
 * by walking its parentId chain (a step bound guards against a cycle). */
void sgt_bf_set_within(sgt_bf *bf, const char *id) {
  free(bf->keep);
  bf->keep = NULL;
  if (!id) return;
  bf->keep = calloc(bf->n ? bf->n : 1, 1);
  if (!bf->keep) abort();
  /* the items by id, for the walk */
  size_t *by = malloc((bf->n ? bf->n : 1) * sizeof *by);
  if (!by) abort();
  for (size_t i = 0; i < bf->n; i++) by[i] = i;
  sgt__bf_sort_ids(bf, by);
  for (size_t i = 0; i < bf->n; i++) {
    const char *p = bf->items[i].item->parent_id;
    for (size_t steps = 0; p && steps <= bf->n; steps++) {
      if (strcmp(p, id) == 0) {
        bf->keep[i] = 1;
        break;
      }
      size_t lo = 0, hi = bf->n;
      const char *next = NULL;
      while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(bf->items[by[mid]].item->id, p);
        if (c == 0) {
          next = bf->items[by[mid]].item->parent_id;
          break;
        }
        if (c < 0)
          lo = mid + 1;
        else
          hi = mid;
      }
      p = next;
    }
  }
  free(by);
}

void sgt_bf_free(sgt_bf *bf) {
  if (!bf) return;
  free(bf->keep);
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

/* ---- section 3.3 straight from the text ---------------------------------------------- */

#define MAXW 4096

/* The words of s[0..len) (runs between spaces): byte starts and lengths. */
static size_t split_words(const char *s, size_t len, size_t *at, size_t *wl) {
  size_t n = 0;
  for (size_t i = 0; i < len;) {
    size_t j = i;
    while (j < len && s[j] != ' ') j++;
    if (j > i && n < MAXW) {
      at[n] = i;
      wl[n] = j - i;
      n++;
    }
    i = j + 1;
  }
  return n;
}

typedef struct {
  const char *q;
  size_t qat[8], qwl[8], m;
  const char *c;
  size_t *cat, *cwl, nc;
  int used[MAXW];
  size_t pos[8];
} t3_state;

/* Tries every position for query word i in ascending order (so the first complete
 * assignment found is the lexicographically smallest): w1 .. w(m-1) equal to their
 * word, wm a prefix of its word, all positions distinct. */
static int t3_dfs(t3_state *s, size_t i) {
  if (i == s->m) return 1;
  for (size_t p = 0; p < s->nc; p++) {
    if (s->used[p]) continue;
    const char *w = s->q + s->qat[i], *cw = s->c + s->cat[p];
    size_t wl = s->qwl[i], cl = s->cwl[p];
    int ok = i + 1 < s->m ? wl == cl && memcmp(w, cw, wl) == 0 : wl <= cl && memcmp(w, cw, wl) == 0;
    if (!ok) continue;
    s->used[p] = 1;
    s->pos[i] = p;
    if (t3_dfs(s, i + 1)) return 1;
    s->used[p] = 0;
  }
  return 0;
}

/* Tier 3 of c for q: 1 with the smallest assignment in st->pos, or 0. */
static int tier3_of(const char *nq, size_t len, const char *c, size_t cl, t3_state *st, size_t *cat,
                    size_t *cwl) {
  st->q = nq;
  size_t qat[MAXW], qwl[MAXW];
  size_t m = split_words(nq, len, qat, qwl);
  if (m < 2 || m > 6) return 0;
  st->m = m;
  memcpy(st->qat, qat, m * sizeof *qat);
  memcpy(st->qwl, qwl, m * sizeof *qwl);
  st->c = c;
  st->cat = cat;
  st->cwl = cwl;
  st->nc = split_words(c, cl, cat, cwl);
  memset(st->used, 0, st->nc * sizeof *st->used);
  return t3_dfs(st, 0);
}

/* s[0..len) without its spaces, malloc'd, and its code points. */
static char *despace(const char *s, size_t len, size_t *out_len, size_t *ncp) {
  char *r = malloc(len + 1);
  if (!r) abort();
  size_t k = 0, n = 0;
  for (size_t i = 0; i < len; i++)
    if (s[i] != ' ') {
      r[k++] = s[i];
      n += ((unsigned char)s[i] >> 6) != 2;
    }
  r[k] = '\0';
  *out_len = k;
  if (ncp) *ncp = n;
  return r;
}

/* Tier 4 of c for q: q without spaces (at least 4 code points) a prefix of c without. */
static int tier4_of(const char *nq, size_t len, const char *c, size_t cl) {
  size_t ql, cpn, tl;
  char *qs = despace(nq, len, &ql, &cpn);
  char *cs = despace(c, cl, &tl, NULL);
  int r = cpn >= 4 && ql <= tl && memcmp(qs, cs, ql) == 0;
  free(qs);
  free(cs);
  return r;
}

static int words_tier(const char *nq, size_t len, const char *c, size_t cl, int tier) {
  if (tier == 4) return tier4_of(nq, len, c, cl);
  static t3_state st;
  static size_t cat[MAXW], cwl[MAXW];
  return tier3_of(nq, len, c, cl, &st, cat, cwl);
}

static size_t query_tiers(const sgt_bf *bf, const char *nq, size_t len, size_t out[10], int words);

size_t sgt_bf_query(const sgt_bf *bf, const char *nq, size_t len, size_t out[10]) {
  return query_tiers(bf, nq, len, out, 1);
}

/* Section 3 alone (tiers 0-2), as before section 3.3. */
size_t sgt_bf_query_012(const sgt_bf *bf, const char *nq, size_t len, size_t out[10]) {
  return query_tiers(bf, nq, len, out, 0);
}

static size_t query_tiers(const sgt_bf *bf, const char *nq, size_t len, size_t out[10], int words) {
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

    for (int tt = 3; words && tier < 0 && tt <= 4; tt++)
      for (size_t a = 0; tier < 0 && a <= b->n_aliases; a++) {
        const ntext *t = a == 0 ? &b->dv : &b->aliases[a - 1];
        if (words_tier(nq, len, t->text, t->len, tt)) tier = tt;
      }
    if (tier >= 0 && kept(bf, i)) m[nm++] = (match){tier, b, i};
  }
  qsort(m, nm, sizeof *m, cmp_match);
  size_t k = nm < 10 ? nm : 10;
  for (size_t i = 0; i < k; i++) out[i] = m[i].idx;
  free(m);
  return k;
}

/* ---- sections 3.1 and 3.2 -------------------------------------------------------------- */

/* Code points of UTF-8 s[0..len) (valid: it is normalised text) into a malloc'd array. */
static unsigned *cps(const char *s, size_t len, size_t *n) {
  unsigned *v = malloc((len + 1) * sizeof *v);
  if (!v) abort();
  size_t k = 0;
  for (size_t i = 0; i < len;) {
    const unsigned char *u = (const unsigned char *)s + i;
    unsigned c = u[0], l = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4, cp = c;
    if (l == 2) cp = c & 0x1F;
    if (l == 3) cp = c & 0x0F;
    if (l == 4) cp = c & 0x07;
    for (unsigned j = 1; j < l; j++) cp = cp << 6 | (u[j] & 0x3F);
    v[k++] = cp;
    i += l;
  }
  *n = k;
  return v;
}

/* The full OSA table D[i][j] = OSA(a[0..i), b[0..j)), (na + 1) x (nb + 1), malloc'd. */
static unsigned *osa_table(const unsigned *a, size_t na, const unsigned *b, size_t nb) {
  unsigned *d = malloc((na + 1) * (nb + 1) * sizeof *d);
  if (!d) abort();
#define D(i, j) d[(i) * (nb + 1) + (j)]
  for (size_t i = 0; i <= na; i++)
    for (size_t j = 0; j <= nb; j++) {
      if (i == 0 || j == 0) {
        D(i, j) = (unsigned)(i + j);
        continue;
      }
      unsigned v = D(i - 1, j) + 1;
      if (D(i, j - 1) + 1 < v) v = D(i, j - 1) + 1;
      unsigned sub = D(i - 1, j - 1) + (a[i - 1] != b[j - 1]);
      if (sub < v) v = sub;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && D(i - 2, j - 2) + 1 < v)
        v = D(i - 2, j - 2) + 1;
      D(i, j) = v;
    }
#undef D
  return d;
}

unsigned sgt_osa(const unsigned *a, size_t na, const unsigned *b, size_t nb) {
  unsigned *d = osa_table(a, na, b, nb);
  unsigned r = d[na * (nb + 1) + nb];
  free(d);
  return r;
}

#define INF 1000u

/* edits(q, t): infinite unless the first code points agree, else the least OSA distance
 * over every prefix of t; *plen the shortest such prefix (code points). One full table
 * D[i][j] = OSA(t[0..i), q[0..j)) gives every prefix's distance in its last column. */
static unsigned edits_of(const unsigned *q, size_t n, const char *t, size_t tl, size_t *plen) {
  if (n == 0) { /* with zero edits section 3.1 is section 3: "" is a prefix of every text */
    if (plen) *plen = 0;
    return 0;
  }
  if (tl == 0) return INF;
  size_t first_len = (unsigned char)t[0] < 0x80   ? 1
                     : (unsigned char)t[0] < 0xE0 ? 2
                     : (unsigned char)t[0] < 0xF0 ? 3
                                                  : 4;
  size_t one;
  unsigned *c0 = cps(t, first_len <= tl ? first_len : tl, &one);
  unsigned first = c0[0];
  free(c0);
  if (first != q[0]) return INF; /* most candidates: decided without the table */
  size_t m;
  unsigned *tc = cps(t, tl, &m);
  unsigned best = INF;
  if (n > 0 && m > 0 && tc[0] == q[0]) {
    /* Row i's last cell is the distance of q to the prefix of i code points. */
    unsigned *d = osa_table(tc, m, q, n);
    for (size_t i = 0; i <= m; i++)
      if (d[i * (n + 1) + n] < best) {
        best = d[i * (n + 1) + n];
        if (plen) *plen = i;
      }
    free(d);
  }
  free(tc);
  return best;
}

typedef struct {
  unsigned edits, tier;
  const bf_item *it;
  size_t idx;
} kmatch;

static int cmp_kmatch(const void *pa, const void *pb) {
  const kmatch *a = pa, *b = pb;
  if (a->edits != b->edits) return a->edits < b->edits ? -1 : 1;
  match x = {(int)a->tier, a->it, a->idx}, y = {(int)b->tier, b->it, b->idx};
  return cmp_match(&x, &y);
}

static void consider(unsigned *be, unsigned *bt, unsigned e, unsigned t) {
  if (e < *be || (e == *be && t < *bt)) {
    *be = e;
    *bt = t;
  }
}

size_t sgt_bf_query_k(const sgt_bf *bf, const char *nq, size_t len, unsigned k, size_t out[10],
                      unsigned edits[10], unsigned tier[10]) {
  size_t n;
  unsigned *q = cps(nq, len, &n);
  kmatch *m = malloc((bf->n ? bf->n : 1) * sizeof *m);
  if (!m) abort();
  size_t nm = 0;
  /* Whether tiers 3 and 4 can apply at all (2 to 6 words; 4 code points without spaces),
   * only to save time: words_tier checks both again. */
  size_t qat[MAXW], qwl[MAXW], dl, dcp;
  size_t nqw = split_words(nq, len, qat, qwl);
  int t3_words = nqw >= 2 && nqw <= 6;
  free(despace(nq, len, &dl, &dcp));
  int t4_ok = dcp >= 4;
  for (size_t i = 0; i < bf->n; i++) {
    const bf_item *b = &bf->items[i];
    unsigned be = INF, bt = 5;
    /* Candidates: the displayValue (tier 0), each alias (1), each later word of either (2). */
    consider(&be, &bt, edits_of(q, n, b->dv.text, b->dv.len, NULL), 0);
    for (size_t a = 0; a < b->n_aliases; a++)
      consider(&be, &bt, edits_of(q, n, b->aliases[a].text, b->aliases[a].len, NULL), 1);
    for (size_t a = 0; a <= b->n_aliases; a++) {
      const ntext *t = a == 0 ? &b->dv : &b->aliases[a - 1];
      for (size_t p = 1; p < t->len; p++)
        if (t->text[p - 1] == ' ')
          consider(&be, &bt, edits_of(q, n, t->text + p, t->len - p, NULL), 2);
    }

    /* Section 3.3: tiers 3 and 4 with zero edits, over the displayValue and aliases. */
    for (int tt = 3; tt <= 4 && be > 0; tt++)
      for (size_t a = 0; a <= b->n_aliases && (tt == 3 ? t3_words : t4_ok); a++) {
        const ntext *t = a == 0 ? &b->dv : &b->aliases[a - 1];
        if (words_tier(nq, len, t->text, t->len, tt)) consider(&be, &bt, 0, (unsigned)tt);
      }
    if (be <= k && kept(bf, i)) m[nm++] = (kmatch){be, bt, b, i};
  }
  qsort(m, nm, sizeof *m, cmp_kmatch);
  size_t r = nm < 10 ? nm : 10;
  for (size_t i = 0; i < r; i++) {
    out[i] = m[i].idx;
    edits[i] = m[i].edits;
    tier[i] = m[i].tier;
  }
  free(m);
  free(q);
  return r;
}

/* Section 3.3's highlight on the displayValue: the UTF-16 ranges of the chosen code
 * points, sorted by start, merged where they touch or overlap; none when the
 * displayValue does not match at this tier (the item matched through an alias). */
static size_t words_highlight(const sgt_bf *bf, size_t item, const char *nq, size_t len,
                              unsigned tier, unsigned *out, size_t max) {
  const char *dv = bf->items[item].display;
  size_t dl = strlen(dv);
  char *norm = malloc(dl * 18 + 8);
  uint32_t *map = malloc((dl * 18 + 8) * 2 * sizeof *map);
  size_t ncp = 0;
  if (!norm || !map) abort();
  long nl = sg_normalize_map(dv, dl, norm, dl * 18 + 8, map, dl * 18 + 8, &ncp);
  if (nl < 0) abort();
  /* Chosen code points of the normalised displayValue: flags per code point. */
  char *pick = calloc(ncp + 1, 1);
  size_t *cpat = malloc((size_t)(nl + 1) * sizeof *cpat); /* byte -> code point */
  if (!pick || !cpat) abort();
  for (size_t b = 0, k = 0; b <= (size_t)nl; b++) {
    if (b < (size_t)nl && (unsigned char)norm[b] >> 6 == 2) {
      cpat[b] = k - 1;
      continue;
    }
    cpat[b] = k++;
  }
  int found = 0;
  if (tier == 4 && tier4_of(nq, len, norm, (size_t)nl)) {
    size_t ql, cpn;
    char *qs = despace(nq, len, &ql, &cpn);
    /* The byte of norm where the ql-th non-space byte is: its code point is the last. */
    size_t seen = 0, b = 0;
    for (; b < (size_t)nl; b++)
      if (norm[b] != ' ' && ++seen == ql) break;
    for (size_t k = 0; k <= cpat[b]; k++) pick[k] = 1;
    free(qs);
    found = 1;
  }
  if (tier == 3) {
    static t3_state st;
    size_t *cat = malloc(MAXW * sizeof *cat), *cwl = malloc(MAXW * sizeof *cwl);
    if (!cat || !cwl) abort();
    if (tier3_of(nq, len, norm, (size_t)nl, &st, cat, cwl)) {
      found = 1;
      for (size_t i = 0; i < st.m; i++) {
        size_t p = st.pos[i], from = cat[p];
        size_t to = from + (i + 1 < st.m ? cwl[p] : st.qwl[i]);
        for (size_t b = from; b < to; b++) pick[cpat[b]] = 1;
      }
    }
    free(cat);
    free(cwl);
  }
  /* Every chosen code point's range, sorted by start, merged. */
  size_t np = 0;
  unsigned *pr = malloc((ncp + 1) * 2 * sizeof *pr);
  if (!pr) abort();
  size_t nr = 0;
  for (size_t k = 0; found && k < ncp; k++)
    if (pick[k]) {
      pr[2 * nr] = map[2 * k];
      pr[2 * nr + 1] = map[2 * k + 1];
      nr++;
    }
  for (size_t i = 1; i < nr; i++) /* insertion sort by start */
    for (size_t j = i; j > 0 && pr[2 * j - 2] > pr[2 * j]; j--) {
      unsigned a = pr[2 * j], b = pr[2 * j + 1];
      pr[2 * j] = pr[2 * j - 2];
      pr[2 * j + 1] = pr[2 * j - 1];
      pr[2 * j - 2] = a;
      pr[2 * j - 1] = b;
    }
  for (size_t i = 0; i < nr; i++) {
    unsigned a = pr[2 * i], b = pr[2 * i + 1];
    if (np && a <= out[2 * np - 1]) {
      if (b > out[2 * np - 1]) out[2 * np - 1] = b;
    } else if (np < max) {
      out[2 * np] = a;
      out[2 * np + 1] = b;
      np++;
    }
  }
  free(pr);
  free(pick);
  free(cpat);
  free(norm);
  free(map);
  return np;
}

size_t sgt_bf_highlight(const sgt_bf *bf, size_t item, const char *nq, size_t len, unsigned edits,
                        unsigned tier, unsigned *out, size_t max) {
  if (tier == 1) return 0;
  if (tier >= 3) return words_highlight(bf, item, nq, len, tier, out, max);
  const char *dv = bf->items[item].display;
  size_t dl = strlen(dv);
  char *norm = malloc(dl * 18 + 8);
  uint32_t *map = malloc((dl * 18 + 8) * 2 * sizeof *map);
  size_t ncp = 0;
  if (!norm || !map) abort();
  long nl = sg_normalize_map(dv, dl, norm, dl * 18 + 8, map, dl * 18 + 8, &ncp);
  if (nl < 0) abort();
  size_t n;
  unsigned *q = cps(nq, len, &n);
  /* The matched candidate of the displayValue: the whole text at tier 0; the first later
   * word at the item's distance at tier 2 (none: it matched through an alias). */
  size_t cp_at = 0, start = 0, plen = 0;
  int found = 0;
  for (size_t p = 0; p < (size_t)nl && !found; p++) {
    if ((unsigned char)norm[p] >> 6 == 2) continue; /* inside a code point */
    int cand = tier == 0 ? p == 0 : p > 0 && norm[p - 1] == ' ';
    if (cand && edits_of(q, n, norm + p, (size_t)nl - p, &plen) == edits) {
      start = cp_at;
      found = 1;
    }
    cp_at++;
  }
  size_t np = 0;
  if (found)
    for (size_t c = start; c < start + plen; c++) {
      unsigned a = map[2 * c], b = map[2 * c + 1];
      if (np && a <= out[2 * np - 1]) {
        if (b > out[2 * np - 1]) out[2 * np - 1] = b;
      } else if (np < max) {
        out[2 * np] = a;
        out[2 * np + 1] = b;
        np++;
      }
    }
  free(q);
  free(norm);
  free(map);
  return np;
}

/* ---- synonyms (docs/DESIGN.md §3.4), straight from the text ---------------------------- */

/* Whether p occurs in c at byte `at` as whole words. */
static int whole_words_at(const ntext *c, size_t at, const ntext *p) {
  if (at > 0 && c->text[at - 1] != ' ') return 0;
  if (at + p->len > c->len || memcmp(c->text + at, p->text, p->len) != 0) return 0;
  return at + p->len == c->len || c->text[at + p->len] == ' ';
}

static int ntext_eq(const ntext *a, const char *t, size_t len) {
  return a->len == len && memcmp(a->text, t, len) == 0;
}

int sgt_bf_add_synonyms(sgt_bf *bf, const sg_synonym_set *sets, size_t n) {
  for (size_t i = 0; i < bf->n; i++) {
    bf_item *b = &bf->items[i];
    size_t own = b->n_aliases;
    ntext *al = realloc(b->aliases, (own + 20 + 1) * sizeof *al);
    if (!al) return -1;
    b->aliases = al;
    size_t extra = 0;
    /* Candidates: the displayValue, then the item's own aliases (never the new ones). */
    for (size_t ci = 0; ci <= own && extra < 20; ci++) {
      const ntext *c = ci == 0 ? &b->dv : &b->aliases[ci - 1];
      for (size_t si = 0; si < n && extra < 20; si++) {
        const sg_synonym_set *set = &sets[si];
        for (size_t pi = 0; pi < set->n_phrases && extra < 20; pi++) {
          ntext s;
          if (norm(set->phrases[pi], &s)) return -1;
          size_t at = SIZE_MAX;
          for (size_t x = 0; s.len && x + s.len <= c->len && at == SIZE_MAX; x++)
            if (whole_words_at(c, x, &s)) at = x;
          for (size_t ri = 0; at != SIZE_MAX && ri < (set->input ? 1 : set->n_phrases); ri++) {
            if (!set->input && ri == pi) continue;
            ntext r;
            if (norm(set->input ? set->input : set->phrases[ri], &r)) return -1;
            size_t tl = at + r.len + (c->len - at - s.len);
            char *t = malloc(tl + 1);
            if (!t) return -1;
            memcpy(t, c->text, at);
            memcpy(t + at, r.text, r.len);
            memcpy(t + at + r.len, c->text + at + s.len, c->len - at - s.len);
            t[tl] = '\0';
            free(r.text);
            /* Dropped when equal to a candidate or an earlier synonym alias. */
            int dup = r.len == 0 || ntext_eq(&b->dv, t, tl);
            for (size_t a = 0; a < own + extra && !dup; a++) dup = ntext_eq(&b->aliases[a], t, tl);
            if (dup || extra == 20) {
              free(t);
              continue;
            }
            b->aliases[own + extra] = (ntext){t, tl};
            extra++;
            b->n_aliases = own + extra;
          }
          free(s.text);
        }
      }
    }
  }
  return 0;
}
