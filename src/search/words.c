/*
 * Tiers 3 and 4 of docs/DESIGN.md §3.3 over an opened artifact (docs/ARTIFACT.md,
 * "Extension sections"): words in any order and words run together, both exact and with
 * zero edits, merged into the top 10 after the zero-edit matches of tiers 0-2 and before
 * any typo match.
 *
 * Tier 3. Every key is a candidate text from one of its word starts, so the keys equal to
 * a word w or starting with "w " are exactly the places an item has the word w, and the
 * keys starting with wm the places it has a word wm is a prefix of. An item matching q
 * at tier 3 has a key in each of those ranges (a key's text per item is kept once, but
 * with the same bytes, so the item still appears). The search takes the smallest of the
 * m ranges and verifies each item found there against all its candidate texts
 * (SG__EXT_CANDS), so the answer is exact; items that could no longer enter the top 10
 * are not verified. When the two smallest ranges are both large, only the items in both
 * (a set of the smaller's ordinals, probed in the other's order) are verified.
 *
 * Tier 4. The run-together index (SG__EXT_RUNON) holds every candidate text of every item
 * sorted by its bytes with spaces skipped, so the candidates q (spaces skipped) is a
 * prefix of are one range; like the keys, a range of more than T records has a
 * precomputed bucket of its best 10 items, a smaller one is scanned.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "compiler/words.h"
#include "search/internal.h"

#define T3 (3ull << 32)
#define T4 (4ull << 32)
#define RUNON_REC 8u
#define RUNON_HDR 16u
/* One record in this many is sampled at open (locale_view.runon_sample). */
#define SG__RUNON_STRIDE 32u

/* ---- open: check the sections ------------------------------------------------------- */

/* The first 8 bytes of t[0..len) (or to its NUL) with its spaces skipped, big-endian,
 * NUL-padded: comparing two of these as integers compares the texts' first 8 bytes
 * (spaces skipped, a text that ends first below), like sg__t4_cmp. */
static uint64_t run8(const char *t, size_t len) {
  uint64_t x = 0;
  unsigned n = 0;
  for (size_t i = 0; n < 8 && i < len && t[i]; i++)
    if (t[i] != ' ') {
      x |= (uint64_t)(unsigned char)t[i] << (56 - 8 * n);
      n++;
    }
  return x;
}

void sg__words_close(locale_view *v) {
  free(v->runon_sample);
  v->runon_sample = NULL;
  v->n_runon_sample = 0;
}

int sg__words_open(const sg_artifact *a, uint32_t loc, locale_view *v) {
  uint64_t len;
  uint64_t n = a->n_items;
  bool text_ok = v->text_len > 0 && v->text[v->text_len - 1] == '\0';
  const unsigned char *c = sg__artifact_ext(a, SG__EXT_CANDS, loc, &len);
  if (c) {
    if (len < 4 * (n + 1) || (len - 4 * (n + 1)) % 4) return -1;
    uint64_t nc = (len - 4 * (n + 1)) / 4;
    if ((nc && !text_ok) || sg__rd32(c) != 0 || sg__rd32(c + 4 * n) != nc) return -1;
    for (uint64_t o = 0; o < n; o++)
      if (sg__rd32(c + 4 * o) > sg__rd32(c + 4 * (o + 1))) return -1;
    const unsigned char *off = c + 4 * (n + 1);
    for (uint64_t i = 0; i < nc; i++)
      if (sg__rd32(off + 4 * i) >= v->text_len) return -1;
    v->cand_start = c;
    v->cand_off = off;
  }
  const unsigned char *r = sg__artifact_ext(a, SG__EXT_RUNON, loc, &len);
  if (r) {
    if (len < RUNON_HDR) return -1;
    uint64_t ne = sg__rd64(r), nb = sg__rd64(r + 8);
    if ((ne && !text_ok) || ne >= UINT32_MAX || ne > (len - RUNON_HDR) / RUNON_REC) return -1;
    uint64_t rest = len - RUNON_HDR - ne * RUNON_REC;
    if (rest % SG__BUCKET_SIZE || nb != rest / SG__BUCKET_SIZE) return -1;
    const unsigned char *e = r + RUNON_HDR, *b = e + ne * RUNON_REC;
    for (uint64_t i = 0; i < ne; i++)
      if (sg__rd32(e + i * RUNON_REC) >= v->text_len || sg__rd32(e + i * RUNON_REC + 4) >= n)
        return -1;
    for (uint64_t i = 0; i < nb; i++) {
      const unsigned char *x = b + i * SG__BUCKET_SIZE;
      uint32_t lo = sg__rd32(x), hi = sg__rd32(x + 4), bn = sg__rd32(x + 8);
      if (lo >= hi || hi > ne || bn > SG_BUCKET_ITEMS) return -1;
      for (uint32_t j = 0; j < bn; j++)
        if (sg__rd32(x + 12 + 4 * j) >= n) return -1; /* ordinals, tier bits zero */
    }
    v->runon = e;
    v->n_runon = ne;
    v->runon_buckets = b;
    v->n_runon_buckets = nb;
    if (ne >= 4 * SG__RUNON_STRIDE) {
      uint64_t ns = (ne - 1) / SG__RUNON_STRIDE + 1;
      uint64_t *smp = malloc(ns * sizeof *smp);
      if (smp) { /* else the binary search runs over the records alone */
        for (uint64_t j = 0; j < ns; j++)
          smp[j] = run8(v->text + sg__rd32(e + j * SG__RUNON_STRIDE * RUNON_REC), SIZE_MAX);
        v->runon_sample = smp;
        v->n_runon_sample = ns;
      }
    }
  }
  const unsigned char *w = sg__artifact_ext(a, SG__EXT_WORDS, loc, &len);
  if (w) {
    if (len < 16) return -1;
    uint64_t nw = sg__rd64(w), np = sg__rd64(w + 8);
    if (nw >= UINT32_MAX || np >= UINT32_MAX || nw > v->n_keys) return -1;
    if ((len - 16) / 4 < 2 * nw + 1 + np || len - 16 != 4 * (2 * nw + 1) + 6 * np) return -1;
    const unsigned char *klo = w + 16, *ps = klo + 4 * nw, *post = ps + 4 * (nw + 1);
    if (sg__rd32(ps) != 0 || sg__rd32(ps + 4 * nw) != np) return -1;
    for (uint64_t d = 0; d < nw; d++) {
      uint32_t k = sg__rd32(klo + 4 * d);
      if (k >= v->n_keys || (d && k <= sg__rd32(klo + 4 * (d - 1)))) return -1;
      uint32_t s = sg__rd32(ps + 4 * d), e = sg__rd32(ps + 4 * (d + 1));
      if (s > e || e > np) return -1;
      for (uint32_t i = s; i < e; i++) {
        uint32_t o = sg__rd32(post + 4 * (uint64_t)i);
        if (o >= n || (i > s && o <= sg__rd32(post + 4 * (uint64_t)i - 4))) return -1;
      }
    }
    v->word_klo = klo;
    v->word_pstart = ps;
    v->word_post = post;
    v->word_sig = post + 4 * np;
    v->n_words = nw;
    v->n_word_items = n;
  }
  return 0;
}

/* ---- tier 3 ------------------------------------------------------------------------- */

static bool in_top(const sg__top10 *top, uint32_t ord) {
  for (uint32_t j = 0; j < top->n; j++)
    if ((uint32_t)top->v[j] == ord) return true;
  return false;
}

/* Whether item ord has a candidate text matching q at tier 3. Texts end with a NUL inside
 * the pool (checked at open). */
static bool item_t3(const locale_view *v, uint32_t ord, const sg__qwords *q) {
  uint32_t s = sg__rd32(v->cand_start + 4 * (uint64_t)ord);
  uint32_t e = sg__rd32(v->cand_start + 4 * ((uint64_t)ord + 1));
  for (uint32_t i = s; i < e; i++) {
    const char *c = v->text + sg__rd32(v->cand_off + 4 * (uint64_t)i);
    if (sg__t3_match(c, strlen(c), q)) return true;
  }
  return false;
}

/* The byte of key i at offset at (a key of a prefix range is at least that long; a
 * corrupted order reads a harmless byte of the pool instead). */
static unsigned char key_byte(const locale_view *v, uint64_t i, size_t at) {
  uint64_t off = (uint64_t)sg__rd32(v->keys + i * SG__KEY_SIZE) + at;
  return off < v->text_len ? (unsigned char)v->text[off] : 0xFF;
}

/* The keys where an item has the word w[0..wl) (exact: equal to w, i.e. the key is w or
 * starts with "w ") or a word w is a prefix of (not exact). Keys equal to w sort first in
 * w's prefix range and "w " next, a space being below every other byte of normalised
 * text: their end is the end of the trie child of w's node for a space, or one more
 * binary search finds it (below the node's first child above a space, when w has a node). */
static void word_range(const locale_view *v, const char *w, size_t wl, bool exact, uint64_t *plo,
                       uint64_t *phi) {
  uint32_t x = sg__prefix_range(v, w, wl, plo, phi);
  if (!exact || *plo >= *phi) return;
  uint64_t b = *plo, e = *phi;
  if (x) { /* w's node: "w " is its child for a space, or lies below its first child above */
    uint32_t nch = sg__trie_rd(v, x, SG__T_N), first = sg__trie_rd(v, x, SG__T_FIRST);
    uint32_t c = sg__trie_lower(v, first, nch, ' ');
    if (c < nch && sg__trie_rd(v, first + c, SG__T_CP) == ' ') {
      *phi = sg__trie_rd(v, first + c, SG__T_HI);
      return;
    }
    if (c < nch) e = sg__trie_rd(v, first + c, SG__T_LO);
  }
  while (b < e) {
    uint64_t mid = b + (e - b) / 2;
    if (key_byte(v, mid, wl) <= ' ')
      b = mid + 1;
    else
      e = mid;
  }
  *phi = b;
}

/* Verifies item ord (unless it cannot enter top any more or is in it) and adds it. */
static void try_item(const locale_view *v, uint32_t ord, const sg__qwords *q, sg__top10 *top) {
  if (top->n == SG_BUCKET_ITEMS && (T3 | ord) >= top->v[SG_BUCKET_ITEMS - 1]) return;
  if (in_top(top, ord)) return;
  if (item_t3(v, ord, q)) sg__top10_add(top, T3 | ord);
}

/* The intersection of the two smallest ranges, when it pays: reading key records in
 * order costs a few nanoseconds, verifying an item a few cache misses. A per-thread
 * open-addressing set of the smaller range's ordinals (value ord + 1; a verified one is
 * overwritten with TOMB, which no lookup equals, so it is verified once). */
#define SET_MAX (1u << 18)
#define TOMB UINT32_MAX

static inline uint32_t set_hash(uint32_t ord, uint32_t mask) {
  return (uint32_t)(ord * 0x9E3779B1u) & mask;
}

/* ---- tier 3 over the word index (SG__EXT_WORDS) ---------------------------------------- */

#define GALLOP_NEAR 8u

/* The first index i' >= i of the ascending u32 list p[0..n) whose value is >= x, or n:
 * galloping from i, so a walk through a list costs the gaps it skips, logarithmically. */
static inline uint32_t gallop(const unsigned char *p, uint32_t i, uint32_t n, uint32_t x) {
  if (i >= n || sg__rd32(p + 4 * (uint64_t)i) >= x) return i;
  /* The next few first, without branches: in a sorted list the count of them below x
   * is the answer's offset when it is among them (most seeks in a dense list). */
  if (n - i > GALLOP_NEAR) {
    uint32_t below = 0;
    for (uint32_t k = 1; k <= GALLOP_NEAR; k++) below += sg__rd32(p + 4 * ((uint64_t)i + k)) < x;
    if (below < GALLOP_NEAR) return i + 1 + below;
    i += GALLOP_NEAR;
  }
  uint32_t lo = i, step = 1; /* p[lo] < x */
  for (;;) {
    uint64_t nx = (uint64_t)lo + step;
    if (nx >= n || sg__rd32(p + 4 * nx) >= x) {
      uint32_t hi = nx >= n ? n : (uint32_t)nx; /* the answer is in (lo, hi] */
      lo++;
      while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (sg__rd32(p + 4 * (uint64_t)mid) < x)
          lo = mid + 1;
        else
          hi = mid;
      }
      return lo;
    }
    lo = (uint32_t)nx;
    step <<= 1;
  }
}

/* The first word index entry whose group starts at or after key k. */
static uint64_t word_from(const locale_view *v, uint64_t k) {
  uint64_t b = 0, e = v->n_words;
  while (b < e) {
    uint64_t mid = b + (e - b) / 2;
    if (sg__rd32(v->word_klo + 4 * mid) < k)
      b = mid + 1;
    else
      e = mid;
  }
  return b;
}

/* The word index's entry whose group starts at key lo, or -1. */
static long word_at(const locale_view *v, uint64_t lo) {
  uint64_t b = word_from(v, lo);
  return b < v->n_words && sg__rd32(v->word_klo + 4 * b) == lo ? (long)b : -1;
}

/* A cursor over the union of up to UNION_MAX posting lists (the words wm is a prefix
 * of, when that few: a seek costs a gallop per list); a single word's list is a union
 * of one. */
#define UNION_MAX 4
/* When wm is a prefix of more words, their postings are gathered and sorted (radix sort,
 * per-thread buffers) to lead the walk when at most GATHER_MAX and fewer than the
 * smallest exact word's by GATHER_RATIO; else marked (MARK_MAX, below); else left to
 * the signatures and the verification. */
#define GATHER_MAX 16384u
/* An exact word with at most this many postings leads by signature at once: reading them
 * costs less than the two searches of the word index that name wm's words. */
#define SIG_FIRST 64u
#define GATHER_RATIO 16u
typedef struct {
  const unsigned char *p[UNION_MAX];
  const unsigned char *sig; /* list 0's signatures when it is the file's (k = 1) */
  uint32_t i[UNION_MAX], n[UNION_MAX];
  uint32_t k;
  uint64_t size; /* postings in all, an upper bound of the union's */
} cursor;

static void cursor_list(cursor *c, const locale_view *v, uint64_t d) {
  uint32_t s = sg__rd32(v->word_pstart + 4 * d), e = sg__rd32(v->word_pstart + 4 * (d + 1));
  c->p[c->k] = v->word_post + 4 * (uint64_t)s;
  if (c->k == 0) c->sig = v->word_sig + 2 * (uint64_t)s;
  c->i[c->k] = 0;
  c->n[c->k] = e - s;
  c->k++;
  c->size += e - s;
}

/* Moves every list of c to its first value >= x; returns the least, or UINT32_MAX when
 * every list is spent (ordinals are below 2^30). */
static inline uint32_t cursor_seek(cursor *c, uint32_t x) {
  uint32_t best = UINT32_MAX;
  for (uint32_t j = 0; j < c->k; j++) {
    c->i[j] = gallop(c->p[j], c->i[j], c->n[j], x);
    if (c->i[j] < c->n[j]) {
      uint32_t y = sg__rd32(c->p[j] + 4 * (uint64_t)c->i[j]);
      if (y < best) best = y;
    }
  }
  return best;
}

/* Sorts and deduplicates the n ordinals of a (three 11-bit radix passes, b scratch);
 * returns where the result is and its length in *pn. */
static uint32_t *radix_unique(uint32_t *a, uint32_t *b, uint32_t *pn) {
  uint32_t n = *pn;
  for (unsigned shift = 0; shift < 33; shift += 11) {
    uint32_t cnt[2049] = {0};
    for (uint32_t i = 0; i < n; i++) cnt[((a[i] >> shift) & 2047) + 1]++;
    for (uint32_t j = 0; j < 2048; j++) cnt[j + 1] += cnt[j];
    for (uint32_t i = 0; i < n; i++) b[cnt[(a[i] >> shift) & 2047]++] = a[i];
    uint32_t *t = a;
    a = b;
    b = t;
  }
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; i++)
    if (!m || a[m - 1] != a[i]) a[m++] = a[i];
  *pn = m;
  return a;
}

/* Items having a word wm is a prefix of, marked for the walk when wm has at most
 * MARK_MAX postings and at most MARK_RATIO times the smallest exact word's (setting and
 * clearing a bit per posting then costs less than the verifications the signatures
 * would let through): a per-thread bitmap by ordinal, all zero between queries (the
 * bits set are cleared again after the walk), for locales of at most MARK_BITS items. */
#define MARK_BITS (1u << 23)
#define MARK_MAX 65536u
#define MARK_RATIO 4u

/* Tier 3's per-thread scratch: the set, the gathered postings and the marks, 2.1 MiB. It
 * is mapped at a thread's first tier-3 search rather than declared _Thread_local: glibc
 * zeroes a thread's whole static TLS block when it starts the thread, so 2.1 MiB became
 * resident in every thread of the runtime, those that never search as well. A fresh
 * anonymous mapping reads as zero and takes memory only where it is written; the key's
 * destructor unmaps it when its thread ends. */
typedef struct {
  uint32_t set[SET_MAX];
  uint32_t gather[2][GATHER_MAX];
  uint64_t mark[MARK_BITS / 64];
} t3_scratch;
static _Thread_local t3_scratch *tl_t3;
static pthread_key_t t3_key;
static bool t3_key_ok;
static pthread_once_t t3_once = PTHREAD_ONCE_INIT;

static void t3_unmap(void *p) { munmap(p, sizeof(t3_scratch)); }

static void t3_key_init(void) { t3_key_ok = pthread_key_create(&t3_key, t3_unmap) == 0; }

/* Maps this thread's scratch (out of the search's way: once per thread). */
__attribute__((cold, noinline)) static t3_scratch *t3_map(void) {
  pthread_once(&t3_once, t3_key_init);
  if (!t3_key_ok) return NULL;
  void *p =
      mmap(NULL, sizeof(t3_scratch), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  if (pthread_setspecific(t3_key, p) != 0) {
    munmap(p, sizeof(t3_scratch));
    return NULL;
  }
  tl_t3 = p;
  return tl_t3;
}

/* This thread's scratch, or NULL when it cannot be had (memory short): tier 3 then takes
 * the paths that need none, with the same answers. */
static inline t3_scratch *t3_mem(void) { return tl_t3 ? tl_t3 : t3_map(); }

/* Sets (on) or clears the bits of the postings of words [dlo, dhi). */
static void mark_words(uint64_t *mark, const locale_view *v, uint64_t dlo, uint64_t dhi, bool on) {
  uint32_t s = sg__rd32(v->word_pstart + 4 * dlo), e = sg__rd32(v->word_pstart + 4 * dhi);
  for (uint32_t j = s; j < e; j++) {
    uint32_t o = sg__rd32(v->word_post + 4 * (uint64_t)j); /* < n_items (checked at open) */
    if (on)
      mark[o >> 6] |= 1ull << (o & 63);
    else
      mark[o >> 6] = 0;
  }
}

/* The walk by signature (every cursor one list of the file's): the leader's items whose
 * signature has wm's bits and that every other list holds are verified in ordinal order,
 * as the other walk does, but SIG_BATCH at a time: the three reads that reach each one's
 * first candidate text (its candidates' start, their offsets, the text), each waiting for
 * the one before, are asked for for the whole batch at once. An item at or above the
 * tenth (it could not enter) ends the walk; verification alone decides the rest. */
#define SIG_BATCH 16
static void sig_walk(const locale_view *v, cursor *c, size_t nc, const sg__qwords *q, uint16_t qsig,
                     sg__top10 *top) {
  const unsigned char *p = c[0].p[0], *sig = c[0].sig;
  uint32_t n = c[0].n[0], i = c[0].i[0], b[SIG_BATCH];
  while (i < n) {
    uint64_t lim = top->n == SG_BUCKET_ITEMS ? top->v[SG_BUCKET_ITEMS - 1] : UINT64_MAX;
    size_t nb = 0;
    for (; i < n && nb < SIG_BATCH; i++) {
      if ((sg__rd16(sig + 2 * (uint64_t)i) & qsig) != qsig) continue;
      uint32_t y = sg__rd32(p + 4 * (uint64_t)i), z = y;
      if ((T3 | y) >= lim) {
        n = i; /* ordinals ascend: none after it can enter either */
        break;
      }
      for (size_t j = 1; j < nc && z == y; j++) z = cursor_seek(&c[j], y);
      if (z == UINT32_MAX) n = i; /* another list is spent: nothing after is in all */
      if (z == y) b[nb++] = y;
    }
    for (size_t k = 0; k < nb; k++) __builtin_prefetch(v->cand_start + 4 * (uint64_t)b[k]);
    uint32_t s[SIG_BATCH];
    for (size_t k = 0; k < nb; k++) {
      s[k] = sg__rd32(v->cand_start + 4 * (uint64_t)b[k]);
      if (s[k] < sg__rd32(v->cand_start + 4 * ((uint64_t)b[k] + 1)))
        __builtin_prefetch(v->cand_off + 4 * (uint64_t)s[k]);
      else
        s[k] = UINT32_MAX; /* no candidate text */
    }
    for (size_t k = 0; k < nb; k++)
      if (s[k] != UINT32_MAX)
        __builtin_prefetch(v->text + sg__rd32(v->cand_off + 4 * (uint64_t)s[k]));
    for (size_t k = 0; k < nb; k++) try_item(v, b[k], q, top);
  }
}

/* Tier 3 with the word index: the items having w1 .. w(m-1) as words and a word
 * starting with wm are the intersection of the words' posting lists (and the union of
 * the lists of wm's words), which the walk visits in ordinal order, that is in answer
 * order: the smallest list leads, each of its items is sought in the others from the
 * smallest up (the first that lacks it gives the next item to try), and an item found
 * in all of them is verified against its candidate texts (the words must take distinct
 * positions of one text); the walk ends once the top 10 is full of better values. wm
 * is a union cursor (at most UNION_MAX words), a gathered sorted list (few postings:
 * GATHER_MAX, GATHER_RATIO), marks (MARK_MAX, MARK_RATIO) or, beyond, the signatures
 * beside the leading list's postings (sig_walk; at once when the smallest exact list has
 * at most SIG_FIRST postings); marks and signatures are checked on the leader's
 * items before any other list is sought. Returns false when the index cannot serve the
 * query (a corrupted file: the caller scans). */
static bool tier3_index(const locale_view *v, const sg__qwords *q, t3_scratch *sc, sg__top10 *top) {
  cursor c[SG_T3_MAX_WORDS];
  size_t nc = 0;
  uint64_t smin = UINT64_MAX; /* the smallest exact word's postings */
  long dseen[SG_T3_MAX_WORDS];
  /* Every word's keys first, the last (a prefix, where a typo most often leaves nothing)
   * before the others: some word nowhere means no item matches, and is known before any
   * list is read. */
  const char *wm = q->w[q->m - 1];
  size_t wml = q->len[q->m - 1];
  uint64_t lo, hi, wlo[SG_T3_MAX_WORDS];
  word_range(v, wm, wml, false, &lo, &hi);
  if (lo >= hi) return true;
  for (size_t i = 0; i + 1 < q->m; i++) {
    uint64_t whi;
    word_range(v, q->w[i], q->len[i], true, &wlo[i], &whi);
    if (wlo[i] >= whi) return true;
  }
  for (size_t i = 0; i + 1 < q->m; i++) {
    long d = word_at(v, wlo[i]);
    if (d < 0) return false;
    bool dup = false; /* a repeated word: one list (the verification counts it) */
    for (size_t j = 0; j < nc && !dup; j++) dup = dseen[j] == d;
    if (dup) continue;
    dseen[nc] = d;
    c[nc].k = 0;
    c[nc].size = 0;
    cursor_list(&c[nc], v, (uint64_t)d);
    if (c[nc].size < smin) smin = c[nc].size;
    nc++;
  }
  /* A short exact list leads by signature at once (SIG_FIRST); else wm's words decide. */
  bool marked = false, by_sig = nc && smin <= SIG_FIRST;
  uint64_t dlo = 0, dhi = 0, np = 0;
  if (!by_sig) {
    dlo = word_from(v, lo);
    dhi = word_from(v, hi);
    if (dlo >= dhi) return false;
    np = (uint64_t)sg__rd32(v->word_pstart + 4 * dhi) - sg__rd32(v->word_pstart + 4 * dlo);
  }
  cursor *x = &c[nc];
  x->k = 0;
  x->size = 0;
  if (by_sig) {
    /* nothing to gather or mark */
  } else if (dhi - dlo <= UNION_MAX) {
    for (uint64_t d = dlo; d < dhi; d++) cursor_list(x, v, d);
    nc++;
  } else if (sc && np <= GATHER_MAX && np * GATHER_RATIO < smin) {
    uint32_t n = 0;
    for (uint64_t d = dlo; d < dhi; d++) {
      uint32_t s0 = sg__rd32(v->word_pstart + 4 * d), e0 = sg__rd32(v->word_pstart + 4 * (d + 1));
      for (uint32_t j = s0; j < e0 && n < GATHER_MAX; j++)
        sc->gather[0][n++] = sg__rd32(v->word_post + 4 * (uint64_t)j);
    }
    uint32_t *sorted = radix_unique(sc->gather[0], sc->gather[1], &n);
    for (uint32_t j = 0; j < n; j++) { /* stored like the file's lists: little-endian */
      uint32_t val = sorted[j];
      sg__wr32((unsigned char *)&sorted[j], val);
    }
    x->p[0] = (const unsigned char *)sorted;
    x->sig = NULL;
    x->i[0] = 0;
    x->n[0] = n;
    x->k = 1;
    x->size = n;
    nc++;
  } else if (sc && np <= MARK_MAX && np <= MARK_RATIO * smin && v->n_word_items <= MARK_BITS) {
    mark_words(sc->mark, v, dlo, dhi, true);
    marked = true;
  } else {
    by_sig = true;
  }
  /* The smallest first: it leads the walk. */
  for (size_t i = 1; i < nc; i++)
    for (size_t j = i; j > 0 && c[j].size < c[j - 1].size; j--) {
      cursor t = c[j];
      c[j] = c[j - 1];
      c[j - 1] = t;
    }
  /* Marked or by signature, every cursor is one list of the file's (with signatures)
   * and wm is checked on the leader's items first, in a tight loop: one bit (the
   * marks, warm, or the signature beside the posting) before seeking the other lists. */
  cursor *lead = &c[0];
  uint16_t qsig = sg__word_sig(wm, wml);
  if (by_sig) {
    sig_walk(v, c, nc, q, qsig, top);
    return true;
  }
  uint32_t at = 0;
  for (;;) {
    uint64_t lim = top->n == SG_BUCKET_ITEMS ? top->v[SG_BUCKET_ITEMS - 1] : UINT64_MAX;
    if ((T3 | at) >= lim) break;
    uint32_t y;
    if (marked) {
      const unsigned char *p = lead->p[0];
      uint32_t i = gallop(p, lead->i[0], lead->n[0], at), n = lead->n[0];
      for (; i < n; i++) {
        uint32_t o = sg__rd32(p + 4 * (uint64_t)i);
        if (sc->mark[o >> 6] >> (o & 63) & 1) break;
      }
      lead->i[0] = i;
      if (i == n) break;
      y = sg__rd32(p + 4 * (uint64_t)i);
      if ((T3 | y) >= lim) break;
    } else {
      y = cursor_seek(lead, at);
      if (y == UINT32_MAX) break;
    }
    at = y;
    size_t j = 1;
    for (; j < nc; j++) {
      y = cursor_seek(&c[j], at);
      if (y == UINT32_MAX || y != at) break;
    }
    if (y == UINT32_MAX) break;
    if (j < nc) { /* c[j] lacks it: its next item is the next candidate */
      at = y;
      continue;
    }
    try_item(v, at, q, top);
    at++;
  }
  if (marked) mark_words(sc->mark, v, dlo, dhi, false);
  return true;
}

static void tier3(const locale_view *v, const char *nq, size_t len, size_t dead, sg__top10 *top) {
  sg__qwords q;
  sg__qwords_parse(nq, len, &q);
  if (q.m == 0) return;
  /* The first word, an exact one (m >= 2), starts nq: when the exact lookup found that no
   * key starts with nq's first dead bytes and the word holds them, no key has the word,
   * so no item matches (most one-edit typos in a first word end here, with no walk). */
  if (q.w[0] == nq && q.len[0] >= dead) return;
  t3_scratch *sc = t3_mem();
  if (v->word_klo && tier3_index(v, &q, sc, top)) return;
  uint64_t lo[SG_T3_MAX_WORDS] = {0}, hi[SG_T3_MAX_WORDS] = {0};
  size_t a = 0, b = SIZE_MAX; /* the smallest range, and the next */
  for (size_t i = 0; i < q.m; i++) {
    word_range(v, q.w[i], q.len[i], i + 1 < q.m, &lo[i], &hi[i]);
    if (hi[i] - lo[i] < hi[a] - lo[a] || i == 0) {
      if (i) b = a;
      a = i;
    } else if (b == SIZE_MAX || hi[i] - lo[i] < hi[b] - lo[b]) {
      b = i;
    }
  }
  uint64_t na = hi[a] - lo[a];
  if (na == 0) return;
  uint64_t nb = hi[b] - lo[b];
  if (!sc || na <= 64 || na * 4 > SET_MAX || nb > 48 * na) {
    uint32_t last = UINT32_MAX;
    for (uint64_t i = lo[a]; i < hi[a]; i++) {
      uint32_t ord = sg__rd32(v->keys + i * SG__KEY_SIZE + 4) & SG__KEY_ORD_MASK;
      if (ord == last) continue;
      last = ord;
      try_item(v, ord, &q, top);
    }
    return;
  }
  uint32_t cap = 64;
  while (cap < na * 2) cap <<= 1;
  uint32_t mask = cap - 1;
  uint32_t *set = sc->set;
  memset(set, 0, cap * sizeof *set);
  for (uint64_t i = lo[a]; i < hi[a]; i++) {
    uint32_t ord = sg__rd32(v->keys + i * SG__KEY_SIZE + 4) & SG__KEY_ORD_MASK;
    uint32_t h = set_hash(ord, mask);
    while (set[h] && set[h] != ord + 1) h = (h + 1) & mask;
    set[h] = ord + 1;
  }
  /* Only items in both ranges can match; each is verified once. */
  for (uint64_t i = lo[b]; i < hi[b]; i++) {
    uint32_t ord = sg__rd32(v->keys + i * SG__KEY_SIZE + 4) & SG__KEY_ORD_MASK;
    uint32_t h = set_hash(ord, mask);
    while (set[h] && set[h] != ord + 1) h = (h + 1) & mask;
    if (!set[h]) continue;
    set[h] = TOMB;
    try_item(v, ord, &q, top);
  }
}

/* ---- tier 4 ------------------------------------------------------------------------- */

static inline int runon_cmp(const locale_view *v, uint64_t i, const char *nq, size_t len) {
  return sg__t4_cmp(v->text + sg__rd32(v->runon + i * RUNON_REC), nq, len);
}

static void tier4(const sg_artifact *a, const locale_view *v, const char *nq, size_t len,
                  sg__top10 *top) {
  if (!sg__t4_applies(nq, len)) return;
  uint64_t lo = 0, hi = v->n_runon;
  if (v->runon_sample) {
    /* The sampled records narrow the search: one whose 8 bytes are below nq's first 8
     * sorts below nq (it differs from nq within nq's bytes, lower, or ends first); one
     * whose 8 bytes are above sorts at or above it (it differs above within nq's bytes,
     * or, past them, starts with nq). */
    uint64_t q8 = run8(nq, len), ns = v->n_runon_sample, b = 0, x = ns;
    while (b < x) { /* first sample >= q8 */
      uint64_t mid = b + (x - b) / 2;
      if (v->runon_sample[mid] < q8)
        b = mid + 1;
      else
        x = mid;
    }
    if (b > 0) lo = (b - 1) * SG__RUNON_STRIDE + 1;
    x = ns;
    while (b < x) { /* first sample > q8 */
      uint64_t mid = b + (x - b) / 2;
      if (v->runon_sample[mid] <= q8)
        b = mid + 1;
      else
        x = mid;
    }
    if (b < ns) hi = b * SG__RUNON_STRIDE;
    /* At most 2 * SG__RUNON_STRIDE records remain: their texts, where the search's probes
     * would wait for one after another, are asked for at once. */
    if (hi - lo <= 2 * SG__RUNON_STRIDE)
      for (uint64_t i = lo; i < hi; i++)
        __builtin_prefetch(v->text + sg__rd32(v->runon + i * RUNON_REC));
  }
  while (lo < hi) { /* first record nq is a prefix of, or above it */
    uint64_t mid = lo + (hi - lo) / 2;
    if (runon_cmp(v, mid, nq, len) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  /* Most queries that reach here match no record or a few: the range's end is found
   * galloping from lo (one comparison when lo's record does not start with nq). */
  if (lo >= v->n_runon || runon_cmp(v, lo, nq, len) != 0) return;
  /* Records from lo on compare >= 0 (sorted): ok is one that starts with nq, bad the
   * first known not to (or the end). */
  uint64_t ok = lo, bad = v->n_runon, step = 1;
  for (;;) {
    uint64_t nx = ok + step;
    if (nx >= v->n_runon) break;
    if (runon_cmp(v, nx, nq, len) != 0) {
      bad = nx;
      break;
    }
    ok = nx;
    step <<= 1;
  }
  uint64_t above = ok + 1, end = bad; /* the first record above nq is in (ok, bad] */
  while (above < end) {
    uint64_t mid = above + (end - above) / 2;
    if (runon_cmp(v, mid, nq, len) <= 0)
      above = mid + 1;
    else
      end = mid;
  }
  hi = above;
  if (hi - lo > a->threshold) {
    uint64_t b = 0, x = v->n_runon_buckets;
    while (b < x) { /* buckets sorted by (lo asc, hi desc): find exactly [lo, hi) */
      uint64_t mid = b + (x - b) / 2;
      const unsigned char *r = v->runon_buckets + mid * SG__BUCKET_SIZE;
      uint32_t rlo = sg__rd32(r), rhi = sg__rd32(r + 4);
      if (rlo < lo || (rlo == lo && rhi > hi))
        b = mid + 1;
      else
        x = mid;
    }
    if (b < v->n_runon_buckets) {
      const unsigned char *r = v->runon_buckets + b * SG__BUCKET_SIZE;
      if (sg__rd32(r) == lo && sg__rd32(r + 4) == hi) {
        uint32_t n = sg__rd32(r + 8);
        for (uint32_t j = 0; j < n; j++) sg__top10_add(top, T4 | sg__rd32(r + 12 + 4 * j));
        return;
      }
    }
    /* No bucket: only on a corrupted file; scanning is still exact. */
  }
  for (uint64_t i = lo; i < hi; i++)
    sg__top10_add(top, T4 | sg__rd32(v->runon + i * RUNON_REC + 4));
}

void sg__words_item(const locale_view *v, uint32_t ord, const sg__qwords *q, bool t4,
                    const char *nq, size_t len, sg__top10 *top) {
  if (!v->cand_start || (!q->m && !t4)) return;
  if (top->n == SG_BUCKET_ITEMS && (T3 | ord) >= top->v[SG_BUCKET_ITEMS - 1]) return;
  if (q->m && item_t3(v, ord, q)) {
    sg__top10_add(top, T3 | ord);
    return;
  }
  if (!t4 || (top->n == SG_BUCKET_ITEMS && (T4 | ord) >= top->v[SG_BUCKET_ITEMS - 1])) return;
  uint32_t s = sg__rd32(v->cand_start + 4 * (uint64_t)ord);
  uint32_t e = sg__rd32(v->cand_start + 4 * ((uint64_t)ord + 1));
  for (uint32_t i = s; i < e; i++)
    if (sg__t4_match(v->text + sg__rd32(v->cand_off + 4 * (uint64_t)i), nq, len, NULL)) {
      sg__top10_add(top, T4 | ord);
      return;
    }
}

void sg__words_search(const sg_artifact *a, const locale_view *v, const char *nq, size_t len,
                      size_t dead, sg__top10 *top) {
  /* Ten zero-edit matches of a lower tier: nothing of tier 3 or 4 can enter. */
  if (top->n == SG_BUCKET_ITEMS && top->v[SG_BUCKET_ITEMS - 1] < T3) return;
  if (v->cand_start) tier3(v, nq, len, dead, top);
  if (top->n == SG_BUCKET_ITEMS && top->v[SG_BUCKET_ITEMS - 1] < T4) return;
  if (v->runon) tier4(a, v, nq, len, top);
}
