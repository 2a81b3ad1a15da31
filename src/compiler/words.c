/*
 * Tiers 3 and 4 (docs/DESIGN.md §3.3) on one candidate text; see words.h.
 *
 * Tier 3 without trying assignments: w1 .. w(m-1) must equal their words, and equal
 * words are interchangeable, so they fit exactly when c holds each distinct one at least
 * as often as they repeat it; wm then needs one more word having it as a prefix that
 * is not used up, i.e. a word y with wm a prefix of y that c holds more often than
 * w1 .. w(m-1) name it. Linear in c per query word, no allocation.
 */
#include "compiler/words.h"

#include <string.h>

void sg__qwords_parse(const char *nq, size_t len, sg__qwords *q) {
  q->m = 0;
  size_t m = 0;
  for (size_t i = 0; i < len;) {
    size_t j = i;
    while (j < len && nq[j] != ' ') j++;
    if (j > i) {
      if (m == SG_T3_MAX_WORDS) return; /* 7 or more words: no tier 3 */
      q->w[m] = nq + i;
      q->len[m] = j - i;
      m++;
    }
    i = j + 1;
  }
  if (m >= SG_T3_MIN_WORDS) q->m = m;
}

/* Occurrences of the word w[0..wl) among the words of c[0..clen). */
static size_t count_word(const char *c, size_t clen, const char *w, size_t wl) {
  size_t n = 0;
  for (size_t i = 0; i < clen;) {
    size_t j = i;
    while (j < clen && c[j] != ' ') j++;
    if (j - i == wl && memcmp(c + i, w, wl) == 0) n++;
    i = j + 1;
  }
  return n;
}

/* How many of w1 .. w(m-1) equal w[0..wl). */
static size_t need_of(const sg__qwords *q, const char *w, size_t wl) {
  size_t n = 0;
  for (size_t j = 0; j + 1 < q->m; j++)
    if (q->len[j] == wl && memcmp(q->w[j], w, wl) == 0) n++;
  return n;
}

bool sg__t3_match(const char *c, size_t clen, const sg__qwords *q) {
  if (q->m < SG_T3_MIN_WORDS) return false;
  for (size_t i = 0; i + 1 < q->m; i++) {
    /* Each distinct exact word once: its first occurrence in q. */
    bool seen = false;
    for (size_t j = 0; j < i && !seen; j++)
      seen = q->len[j] == q->len[i] && memcmp(q->w[j], q->w[i], q->len[i]) == 0;
    if (seen) continue;
    if (count_word(c, clen, q->w[i], q->len[i]) < need_of(q, q->w[i], q->len[i])) return false;
  }
  const char *wm = q->w[q->m - 1];
  size_t wml = q->len[q->m - 1];
  for (size_t i = 0; i < clen;) {
    size_t j = i;
    while (j < clen && c[j] != ' ') j++;
    if (j - i >= wml && memcmp(c + i, wm, wml) == 0) {
      size_t need = need_of(q, c + i, j - i);
      if (need == 0 || count_word(c, clen, c + i, j - i) > need) return true;
    }
    i = j + 1;
  }
  return false;
}

/* ---- the highlight's assignment ------------------------------------------------------ */

#define MAX_CWORDS 1024

typedef struct {
  size_t b, len, cp, cps; /* byte start and length, code-point start and length */
} cword;

static bool fits(const sg__qwords *q, size_t i, const char *c, const cword *w) {
  if (i + 1 < q->m) return w->len == q->len[i] && memcmp(c + w->b, q->w[i], w->len) == 0;
  return w->len >= q->len[i] && memcmp(c + w->b, q->w[i], q->len[i]) == 0;
}

/* Kuhn's augmenting path for query word i over the unused positions. */
static bool augment(const sg__qwords *q, size_t i, const char *c, const cword *w, size_t nw,
                    const bool *used, int *owner, bool *seen) {
  for (size_t p = 0; p < nw; p++) {
    if (used[p] || seen[p] || !fits(q, i, c, &w[p])) continue;
    seen[p] = true;
    if (owner[p] < 0 || augment(q, (size_t)owner[p], c, w, nw, used, owner, seen)) {
      owner[p] = (int)i;
      return true;
    }
  }
  return false;
}

/* Whether query words from..m-1 can take distinct positions not in used. */
static bool feasible(const sg__qwords *q, size_t from, const char *c, const cword *w, size_t nw,
                     const bool *used) {
  static _Thread_local int owner[MAX_CWORDS];
  static _Thread_local bool seen[MAX_CWORDS];
  for (size_t p = 0; p < nw; p++) owner[p] = -1;
  for (size_t i = from; i < q->m; i++) {
    memset(seen, 0, nw * sizeof *seen);
    if (!augment(q, i, c, w, nw, used, owner, seen)) return false;
  }
  return true;
}

bool sg__t3_assign(const char *c, size_t clen, const sg__qwords *q, size_t start_cp[],
                   size_t len_cp[]) {
  static _Thread_local cword w[MAX_CWORDS];
  static _Thread_local bool used[MAX_CWORDS];
  if (q->m < SG_T3_MIN_WORDS || !sg__t3_match(c, clen, q)) return false;
  size_t nw = 0, cp = 0;
  for (size_t i = 0; i < clen;) {
    size_t j = i, cps = 0;
    while (j < clen && c[j] != ' ') {
      cps += ((unsigned char)c[j] >> 6) != 2;
      j++;
    }
    if (j > i) {
      if (nw == MAX_CWORDS) return false;
      w[nw++] = (cword){i, j - i, cp, cps};
    }
    cp += cps + 1; /* the space */
    i = j + 1;
  }
  memset(used, 0, nw * sizeof *used);
  /* Greedy from w1: the least position that leaves the rest an assignment gives the
   * lexicographically smallest one. */
  for (size_t i = 0; i < q->m; i++) {
    size_t p = 0;
    for (; p < nw; p++) {
      if (used[p] || !fits(q, i, c, &w[p])) continue;
      used[p] = true;
      if (feasible(q, i + 1, c, w, nw, used)) break;
      used[p] = false;
    }
    if (p == nw) return false; /* cannot happen: c matches */
    start_cp[i] = w[p].cp;
    if (i + 1 < q->m) {
      len_cp[i] = w[p].cps;
    } else {
      size_t n = 0;
      for (size_t b = 0; b < q->len[i]; b++) n += ((unsigned char)q->w[i][b] >> 6) != 2;
      len_cp[i] = n;
    }
  }
  return true;
}

/* ---- tier 4 --------------------------------------------------------------------------- */

bool sg__t4_applies(const char *nq, size_t len) {
  size_t n = 0;
  for (size_t i = 0; i < len && n < SG_T4_MIN_CP; i++)
    n += nq[i] != ' ' && ((unsigned char)nq[i] >> 6) != 2;
  return n >= SG_T4_MIN_CP;
}

int sg__t4_cmp(const char *c, const char *nq, size_t len) {
  const unsigned char *x = (const unsigned char *)c, *y = (const unsigned char *)nq;
  size_t j = 0;
  for (;;) {
    while (j < len && y[j] == ' ') j++;
    if (j == len) return 0;
    while (*x == ' ') x++;
    if (*x != y[j]) return *x < y[j] ? -1 : 1; /* c's NUL: c ended first */
    x++;
    j++;
  }
}

bool sg__t4_match(const char *c, const char *nq, size_t len, size_t *end_cp) {
  size_t j = 0, cp = 0, last = 0;
  bool any = false;
  for (const char *x = c;; x++) {
    while (j < len && nq[j] == ' ') j++;
    if (j == len) break;
    if (*x == ' ') {
      cp++;
      continue;
    }
    if (*x == '\0' || *x != nq[j]) return false;
    if (((unsigned char)*x >> 6) != 2) {
      last = cp;
      cp++;
      any = true;
    }
    j++;
  }
  if (!any) return false;
  if (end_cp) *end_cp = last;
  return true;
}
