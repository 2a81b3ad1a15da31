/*
 * Internals of src/search shared by its three files: the reader and verifier
 * (artifact.c) fills these views once at open; the exact lookup (lookup.c) and the typo
 * search (typo_search.c) read through them without bounds checks, since open checked
 * every offset and length. Nothing outside src/search includes this header.
 */
#ifndef SG_SEARCH_INTERNAL_H
#define SG_SEARCH_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "compiler/format.h"
#include "compiler/typo.h"
#include "compiler/words.h"
#include "search/artifact.h"

/* One locale's sections (format.h), pointing into the artifact's bytes. */
typedef struct {
  const char *tag;
  size_t tag_len;
  const char *text;
  uint64_t text_len;
  const unsigned char *keys;
  uint64_t n_keys;
  const unsigned char *buckets;
  uint64_t n_buckets;
  const unsigned char *fragidx;
  const unsigned char *trie;
  uint64_t n_trie;
  const unsigned char *lcp;                   /* n_keys bytes */
  const unsigned char *branch;                /* n_keys * SG__BRANCH_SIZE bytes */
  const unsigned char *skip[SG__SKIP_TABLES]; /* n_skip[t] skip records of table t */
  uint64_t n_skip[SG__SKIP_TABLES];
  unsigned skip_size; /* bytes per skip record: SG__SKIP_SIZE, or _V5 in format 5 */
  /* The filter by ancestor (format.h, SG__EXT_WITHIN), NULL when the artifact has none:
   * ord2pre and pre2ord (n_items u32 each), kstart (n_items + 1 u32) and the key
   * references (kstart[n_items] records), all checked at open. */
  const unsigned char *w_ord2pre, *w_pre2ord, *w_kstart, *w_refs;
  /* SG__EXT_WSUB: ws_n subtree records (preorder, start, end), the key records and their
   * LCP bytes, checked at open; NULL when none. */
  const unsigned char *ws_recs, *ws_keys, *ws_lcp;
  uint64_t ws_n;

  /* Tiers 3 and 4 (extension sections SG__EXT_CANDS and SG__EXT_RUNON, checked at
   * open; NULL when the artifact has none: a format-5 artifact never does). */
  const unsigned char *cand_start; /* item_count + 1 u32 */
  const unsigned char *cand_off;   /* u32 text offsets */
  const unsigned char *runon;      /* n_runon records (u32 text offset, u32 ordinal) */
  uint64_t n_runon;
  const unsigned char *runon_buckets; /* n_runon_buckets bucket records */
  uint64_t n_runon_buckets;
  /* Built at open (heap, freed by sg__words_close; NULL when the records are few or
   * memory short): the first 8 bytes, spaces skipped, of every SG__RUNON_STRIDE-th
   * record's text, big-endian, NUL-padded: a first level for tier 4's binary search. */
  uint64_t *runon_sample;
  uint64_t n_runon_sample;
  /* SG__EXT_WORDS (checked at open; NULL when absent: tier 3 then verifies the items of
   * its smallest key range): per distinct word, its first key and its postings. */
  const unsigned char *word_klo;    /* n_words u32 */
  const unsigned char *word_pstart; /* n_words + 1 u32 */
  const unsigned char *word_post;   /* u32 ordinals */
  const unsigned char *word_sig;    /* n_postings u16: each posting's item's word signature */
  uint64_t n_words;
  uint64_t n_word_items; /* item_count: every posting is below it */
} locale_view;

/* The trie node skip record r names (format 6, format.h), whose keys sg__trie_span reads
 * when they are needed (most records checked are not); else UINT32_MAX with the record's
 * keys [*lo, *hi). Checked at open: the node or run is inside the trie or the keys. */
static inline uint32_t sg__skip_run(const locale_view *v, const unsigned char *r, uint32_t *lo,
                                    uint32_t *hi) {
  uint32_t w = sg__rd32(r + 8);
  if (v->skip_size == SG__SKIP_SIZE_V5) {
    *lo = w;
    *hi = sg__rd32(r + 12);
    return UINT32_MAX;
  }
  if (w & SG__SKIP_NODE) return w & ~SG__SKIP_NODE;
  *lo = w & SG__SKIP_LO_MASK;
  *hi = *lo + (w >> SG__SKIP_LO_BITS) + 1;
  return UINT32_MAX;
}

/* The u32 fields of a trie node record, in order (format.h). */
enum {
  SG__T_LO,
  SG__T_HI,
  SG__T_CP,
  SG__T_FIRST,
  SG__T_N,
  SG__T_BEST,
  SG__T_SIG_LO,
  SG__T_SIG_HI,
  SG__T_NEXT_LO,
  SG__T_NEXT_HI
};
_Static_assert(SG__T_NEXT_HI * 4 + 4 == SG__TRIE_SIZE, "a trie record is its ten u32 fields");

/* Field f of trie node x's record (checked at open). */
static inline uint32_t sg__trie_rd(const locale_view *v, uint32_t x, unsigned f) {
  return sg__rd32(v->trie + (uint64_t)x * SG__TRIE_SIZE + 4 * f);
}

/* The keys [*lo, *hi) of trie node x. */
static inline void sg__trie_span(const locale_view *v, uint32_t x, uint32_t *lo, uint32_t *hi) {
  *lo = sg__trie_rd(v, x, SG__T_LO);
  *hi = sg__trie_rd(v, x, SG__T_HI);
}

/* Trie node x's next mask (format.h): bit sg__cp_bit(c) set for every code point c that
 * directly follows its prefix in one of its keys. */
static inline uint64_t sg__trie_next(const locale_view *v, uint32_t x) {
  return sg__trie_rd(v, x, SG__T_NEXT_LO) | (uint64_t)sg__trie_rd(v, x, SG__T_NEXT_HI) << 32;
}

/* The first of the nch sibling nodes from first whose code point is cp or above (nch if
 * none). */
static inline uint32_t sg__trie_lower(const locale_view *v, uint32_t first, uint32_t nch,
                                      uint32_t cp) {
  uint32_t b = 0, e = nch;
  while (b < e) {
    uint32_t m = b + (e - b) / 2;
    if (sg__trie_rd(v, first + m, SG__T_CP) < cp)
      b = m + 1;
    else
      e = m;
  }
  return b;
}

/* The keys of trie node x (children nch from first) between its children b - 1 and b:
 * where the keys that continue x's prefix with a code point between theirs lie. */
static inline void sg__trie_gap(const locale_view *v, uint32_t x, uint32_t first, uint32_t nch,
                                uint32_t b, uint64_t *lo, uint64_t *hi) {
  *lo = b > 0 ? sg__trie_rd(v, first + b - 1, SG__T_HI) : sg__trie_rd(v, x, SG__T_LO);
  *hi = b < nch ? sg__trie_rd(v, first + b, SG__T_LO) : sg__trie_rd(v, x, SG__T_HI);
}

/* The code point at s[i..len) into *cp and its byte length, decoded as the trie's keys are
 * (sg__utf8_next), or 0 when it is malformed, not whole before len, or a NUL. */
static inline size_t sg__cp_in(const char *s, size_t len, size_t i, uint32_t *cp) {
  char b[5] = {0}; /* sg__utf8_next reads up to a NUL: at most the 4 bytes copied */
  memcpy(b, s + i, len - i < 4 ? len - i : 4);
  size_t l = sg__utf8_next(b, cp);
  return *cp < 0x110000u ? l : 0;
}

struct sg_artifact {
  const unsigned char *data;
  size_t len;
  uint32_t version;         /* SG__ART_VERSION or SG__ART_VERSION_PREV */
  const unsigned char *ext; /* n_ext extension records (format 6), checked at open */
  uint64_t n_ext;
  void *map;   /* non-NULL when we own an mmap of len bytes */
  bool sealed; /* map is sealed memory of our own, huge-page aligned (sg_artifact_settle) */
  uint32_t n_items;
  uint32_t n_locales;
  uint32_t def;
  uint32_t threshold;
  const char *frags;
  /* Item ids, for sg_artifact_has_item: n_ids (offset, length) pairs into frags sorted
   * by the id's bytes. Built by the first lookup (under ids_mu; ids_ready published with
   * release order), not at open: sorting millions of ids would lengthen every activation
   * and every load of the control plane, and only selection reports need them. */
  uint32_t *ids; /* per id: offset, length, ordinal (in locale 0) */
  uint32_t n_ids;
  /* SG__EXT_TREE: per preorder, the preorder after its subtree (checked at open), or
   * NULL when no item has a parent (or the artifact is of format 5: see version). */
  const unsigned char *tree_end;
  atomic_bool ids_ready;
  pthread_mutex_t ids_mu;
  locale_view loc[];
};

/* Values in a top list (sg__top10): edits << SG__EDITS_SHIFT | tier << 32 | ordinal, so
 * that sorting them sorts by the relevance contract's (edits, tier, rank) key. */
#define SG__EDITS_SHIFT 40

/* The extension section (kind, loc) (format.h, SG__EXT_*; loc SG__EXT_GLOBAL for one of
 * the whole artifact) and its length in *len, or NULL when the artifact has none (a
 * format-5 artifact has none at all). Its bounds were checked at open; its contents are
 * the feature's to check. */
const unsigned char *sg__artifact_ext(const sg_artifact *a, uint32_t kind, uint32_t loc,
                                      uint64_t *len);

/* Checks the filter-by-ancestor sections of an opened artifact (within.c) and points
 * tree_end and every locale's w_* at them. 0, or -1 when they are malformed. */
int sg__within_open(sg_artifact *a);
/* The ordinal in locale 0 of the item whose id is id[0..len), or -1 (artifact.c). */
long sg__artifact_item_ord(const sg_artifact *a, const char *id, size_t len);
/* The item id of ordinal ord in locale 0's fragments: 0 and (*off, *len) into frags. */
int sg__fragment_id(const sg_artifact *a, uint32_t ord, uint32_t *off, uint32_t *len);

/* ---- exact lookup (lookup.c) ---- */

/* The keys of locale v having nq[0..len) as a byte prefix: [*plo, *phi), empty when
 * none; every key when len is 0. Returns the trie node whose keys they are, or 0. When
 * dead is not NULL, *dead is a length d <= len such that no key starts with nq[0..d),
 * when the lookup learnt one on its way (the range is then empty), else SIZE_MAX. */
uint32_t sg__prefix_range_dead(const locale_view *v, const char *nq, size_t len, uint64_t *plo,
                               uint64_t *phi, size_t *dead);
static inline uint32_t sg__prefix_range(const locale_view *v, const char *nq, size_t len,
                                        uint64_t *plo, uint64_t *phi) {
  return sg__prefix_range_dead(v, nq, len, plo, phi, NULL);
}
/* Adds the best 10 distinct items of the key range [lo, hi), a range some prefix selects,
 * to top, each valued base | tier << 32 | ordinal (base carries the edits). */
void sg__range_top(const sg_artifact *a, const locale_view *v, uint64_t lo, uint64_t hi,
                   uint64_t base, sg__top10 *top);

/* ---- words in any order and run together (words.c) ---- */

/* Offers item ord to top at tier 3 or 4 (zero edits) when one of its candidate texts
 * matches: q parsed by sg__qwords_parse (q->m = 0: tier 3 does not apply), t4 from
 * sg__t4_applies(nq, len). For a search that visits items one by one (the within
 * filter); nothing when the artifact has no candidate section. */
void sg__words_item(const locale_view *v, uint32_t ord, const sg__qwords *q, bool t4,
                    const char *nq, size_t len, sg__top10 *top);
/* Adds to top the items matching nq[0..len) at tier 3 or 4 (docs/DESIGN.md §3.3), with
 * zero edits, as far as they can enter it: top holds the zero-edit matches of tiers 0-2.
 * dead: the exact lookup's (sg__prefix_range_dead) for nq, or SIZE_MAX. Nothing when the
 * locale has no such sections. */
void sg__words_search(const sg_artifact *a, const locale_view *v, const char *nq, size_t len,
                      size_t dead, sg__top10 *top);
/* Checks locale loc's tier 3 and 4 sections (if any) and points v at them. 0 or -1. */
int sg__words_open(const sg_artifact *a, uint32_t loc, locale_view *v);
/* Frees what sg__words_open allocated for v (safe on a zeroed view). */
void sg__words_close(locale_view *v);

/* ---- typo search (typo_search.c) ---- */

/* Adds to top, which holds the exact matches of nq[0..len) (fewer than 10; len > 0, no
 * NUL in nq), the items within 1..k edits (k capped at SG_TYPO_MAX_K) of docs/DESIGN.md
 * §3.1, each at its least distance, until top holds 10 items within some distance.
 * Allocates nothing (per-thread scratch). */
void sg__typo_search(const sg_artifact *a, const locale_view *v, const char *nq, size_t len,
                     unsigned k, sg__top10 *top);

#endif
