/*
 * The typo search of docs/DESIGN.md §3.1 over an opened artifact: the items within
 * 1..k edits of a normalised query, merged into the exact lookup's running top 10
 * (lookup.c calls it only while the exact matches number fewer than 10). It allocates
 * nothing: the DP rows, the walks' stacks and the query's code points live in per-thread
 * scratch (tl below). docs/ARTIFACT.md states the definition it implements and the format
 * sections it reads (trie, LCP and branch bytes, next masks, skip tables).
 *
 * This comment is the argument that the search returns exactly what the brute force of
 * sections 3.1-3.2 returns (every candidate, every prefix, full OSA tables:
 * tests/unit/search/bruteforce.c), section by section as the code below is laid out.
 *
 * ---- The walk ----
 *
 * For each distance d = 1, then d = 2 (only while fewer than 10 items are found, since
 * 10 items within d edits beat every item at d + 1), one depth-first walk over the keys
 * beginning with q's first code point, as a trie of code points: the materialised trie
 * nodes (more than SG__TRIE_MIN keys) give their children's code points and key ranges
 * without reading key text; below them, consecutive sorted keys share the DP rows of
 * their common prefix. Each step computes one row of the OSA DP between the node's prefix
 * and q, kept to the band |i - j| <= 2 (a cell outside it is over any budget) with cells
 * saturated at 3: five bytes (compiler/typo.h). Along each path the walk stops at the
 * first node whose last cell (the distance of q to the node's prefix) is <= d: every key
 * below shares that prefix, so every key below is within d, and the node's key range is
 * merged into the running top 10 through its bucket (or a scan of its <= T keys) valued
 * (d, tier, ordinal) when the cell is exactly d (smaller distances were found by the
 * earlier passes: the exact range, then d = 1; keys below at a smaller distance are
 * found by those passes too, so each key ends up at its least distance).
 *
 * A node is dropped when no key below can reach d: no cell of its row plus the number of
 * q's remaining code points missing from the node's signature is <= d (each code point
 * that never occurs below costs an edit; this implies the classic "row minimum > d" and
 * prunes far more near the root: reachable). No row has a cell below the least cell of
 * the row before it (every recurrence term, the swap included, is at least a cell of the
 * previous row), so dropping is safe. Branch and bound: once the top holds 10 items, a
 * node whose best entry valued at distance d cannot beat the 10th is skipped
 * (bounded_out).
 *
 * ---- Rows without slack (format 4) ----
 *
 * Most of the rows the walk computes have no slack: their least cell is exactly d and
 * their last cell is over it (on the 4.5M package names, ~90% of all rows of the format 3
 * walk). From such a row no deeper row has a cell below d, and a child's row keeps a cell
 * at d only through a match, never through an insertion, deletion or substitution: its
 * cell (i + 1, j + 1) stays at d when the row's cell (i, j) is d and the child's code
 * point is q[j] (the diagonal), and (i + 1, j + 2) reaches d through a swap when cell
 * (i - 1, j) is below d, t_i = q[j + 1] and the child's code point is q[j]. So below such
 * a node only the at most 2 * SG__BAND code points that these cells name can lead
 * anywhere (zs_candidates), and the walk looks exactly those up (zs_walk): by binary
 * search over the node's children, or among its keys through the LCP and branch bytes
 * (a binary search over key text past SCAN_MAX keys or SG__LCP_CAP bytes), instead of
 * stepping every child and every key. Each looked-up child gets the same DP row as
 * before, so the walk visits the same matching nodes and merges the same ranges; it only
 * skips children that provably cannot match. Slack left in a row (an edit still to
 * spend) still steps every child, since a substitution or insertion can be any code
 * point. A key stepped while an edit is left is likewise read from its branch bytes
 * where the walk resumes at its LCP (or one byte past it) and those bytes are ASCII, so
 * most visited keys cost no text read at all (scan_keys).
 *
 * ---- Next masks (format 5) ----
 *
 * Below a node without slack, a candidate code point whose bit is clear in the node's
 * next mask cannot continue any of its keys, so it is dropped before any lookup
 * (zs_filter); for ASCII text the mask is exact, and the lookups left are the ones that
 * find a run.
 *
 * ---- Two edits near the start (format 5) ----
 *
 * On a large list most of the two-edit pass used to be spent near the root: every prefix
 * of two to six code points within two edits of q's start exists, and each had to be
 * looked up to learn that q's rest does not follow it (on the 4.5M package names,
 * thousands of such prefixes per query); the one-edit pass had the same, smaller,
 * neighbourhood to visit. For a query long enough for a skip table (n >= L + G + d code
 * points, sg__skip_min_q: for d = 2, 10 for table 0 and 8 for table 1; for d = 1, 9 and
 * 7) skip_search splits the pass at distance d (1 or 2) by the cost an alignment has
 * reached at row L, after the key's first L code points:
 * - at most d - 1: the same walk, with every cell above d - 1 in the rows of depth <= L
 *   treated as over the budget (cap_row). It visits only the (d - 1)-edit neighbourhood
 *   of q's start (for d = 1, q's first L code points alone) and, below it, everything
 *   the full walk would; an alignment of cost <= d - 1 at row L keeps all its cells, so
 *   the walk finds it exactly as before. One cell is given back in row L + 1: the walk
 *   drops a node when no cell of its row can still lead to a match, which is safe
 *   because, in the plain DP, a swap from (L, j - 2) into row L + 2 is never cheaper
 *   than the cell (L + 1, j) it passes (through (L, j - 1)); the cap can take (L, j - 1)
 *   away, so (L + 1, j) is set from (L, j - 2) + 1 when t[L] = q[j - 1]. (Found by
 *   comparing two table depths on the 4.5M names: without it a swap right after row L,
 *   below a node whose keys lack the swapped code point further down, was dropped;
 *   test_typo_skip.c has that case.)
 * - exactly d: no edit is left, so from its cell (L, j) on the key spells q[j..n)
 *   exactly. Its code points L .. L + G are therefore q[j .. j + G) for some j in
 *   [L - d, L + d] (a cell of cost d is at most d columns off the diagonal): 2d + 1
 *   lookups in the skip table by (q[0], q[j .. j + G)).
 * - a swap across row L (the key's code points L and L + 1 are q[j - 1], q[j - 2], from
 *   a cell (L - 1, j - 2)) skips row L. From a cell below d - 1 the capped walk follows
 *   it (the cell (L, j - 1) is then at most d - 1); from a cell of exactly d - 1, which
 *   is at most d - 1 columns off the diagonal (j - 2 in [L - d, L + d - 2]), it arrives
 *   at (L + 1, j) at cost d and spells q[j..n) from there: its code points L .. L + G
 *   are q[j - 2], q[j], q[j + 1] ... for some j in [L + 2 - d, L + d], 2d - 1 more
 *   lookups (a cell of d or more cannot pay for the swap). So 4 lookups for d = 1 and
 *   8 for d = 2, each a binary search inside the records whose key has q's first code
 *   point (found once per query: sk_lo, sk_hi).
 * Each run a lookup returns is checked from its record's head (or its first key's text)
 * by skip_runs: the DP rows of its first L + G code points, with the cells of row L - 1
 * raised to at least d - 1 and those of row L to at least d (the alignments through
 * lower cells are the capped walk's; a raised cell is never below the cost of the
 * alignments through it, so nothing found is wrong, at worst found again at a higher
 * distance than the earlier pass, or the exact lookup, gave it). A run whose row passes
 * d is dropped; otherwise it has no slack left and is searched like any row without
 * slack (a run of more than SG__TRIE_MIN keys is named by its trie node in format 6:
 * the walk below it then steps through the node's children, next mask and bound, as
 * trie_pass would). With n >= L + G + d every alignment of the last two cases spells G code points
 * after row L (from row L + 1 on it spells q exactly, from a column of at most L + d),
 * so the lookup key names them, and none ends before row L + G (an alignment of cost d
 * covers at least n - d rows), so the run's check sees every match. Records under one
 * key are in key order, so a record reuses the rows it shares with the one before, and
 * one that shares the code points whose row ended the one before is skipped. Before any
 * row, a record whose head is ASCII is dropped when more than d of its code points
 * 1 .. L - 1 are none of the query's code points within d columns of theirs: an
 * alignment within d matches a code point only with a column at most d away (a swap
 * too), so each of those costs an edit of its own, and the rows would drop the record at
 * row L (skip_runs). The union
 * of the three cases is every alignment of cost <= d; the merge keeps each item's least
 * distance, so the answer is the full walk's. Shorter queries take the usual walk.
 * (Until issue 23's last round the one-edit pass always took the usual walk, and the
 * two-edit pass made five swap lookups, j in [L - 1, L + 3]: the two outer ones can
 * find nothing the others miss.)
 *
 * ---- Merging, and how this is checked ----
 *
 * Merging per-range top 10s is exact for the same reason buckets are (docs/ARTIFACT.md,
 * "Lookup and why it is exact"): an item missing from a range's top 10 has 10 better
 * distinct items in that range, all within the same distance, so it cannot be in the
 * overall top 10 either; sg__top10_add keeps each item's best value.
 *
 * Checked against the brute force by tests/unit/search/test_property.c (random lists
 * with aliases, locales, word starts, accents, CJK, emoji; queries made by random
 * inserts, deletes, substitutions and swaps of real keys, under seven typo policies:
 * ~36k typo queries, zero differences in items, order, keys and highlights; queries of
 * 8-9 and of 10 or more code points exercise both skip tables, and a variant of the
 * search with the swap lookups removed, with the one-edit pass's swap lookup removed,
 * with the first or the last lookup of either kind removed, or with a table let serve
 * queries one code point shorter than L + G + d, fails them),
 * test_cities.c (the 135k cities, random edits of real names), test_typo_skip.c (each
 * case of the split above by name, on a list dense near the root: both edits before row
 * L, one before and a swap across it, for each table; heads too long for 8 bytes; a
 * query too short for either table; ~2,600 random edits of those texts) and
 * tests/fuzz/fuzz_typo.c.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "compiler/typo.h"
#include "search/internal.h"

/* Values in a top list: edits << EDITS_SHIFT | tier << 32 | ordinal (internal.h). */
#define EDITS_SHIFT SG__EDITS_SHIFT

/* Per-thread scratch of the search: the query's code points and, per depth of the
 * current key, its DP row, its code point and the byte offset where the next one starts. */
#define MAX_DEPTH (SG_TYPO_MAX_Q + SG_TYPO_MAX_K + 2)
static _Thread_local struct {
  uint32_t q[SG_TYPO_MAX_Q];
  /* q again with SG__Q_NONE in the 4 places before and after it, for sg__osa_step_pad
   * (QP below), which reads up to 4 columns either side of a row's band. */
  uint32_t qpad[SG_TYPO_MAX_Q + 8];
  sg__osa_row row[MAX_DEPTH];
  uint32_t cp[MAX_DEPTH];
  uint32_t bo[MAX_DEPTH];
  /* The trie walk's stack: per depth, the node, its next child, and the first key not
   * yet walked. */
  uint32_t st_node[MAX_DEPTH], st_next[MAX_DEPTH], st_pos[MAX_DEPTH];
  /* Per depth of that stack, in the capped rows of skip_search only: the candidate code
   * points of a node whose row has no slack under the cap (capped_candidates), or
   * NO_CAND for a node whose children are all stepped. */
  uint16_t st_cand[MAX_DEPTH];
  /* The zero-slack walk's stack (zs_walk): per depth, its key range, its trie node
   * (NO_NODE when not materialised), the code points not yet tried below it and the
   * text of its first key. */
  uint32_t zs_lo[MAX_DEPTH], zs_hi[MAX_DEPTH], zs_node[MAX_DEPTH];
  uint8_t zs_left[MAX_DEPTH];      /* the candidates not yet tried (zs_candidates) */
  const char *zs_first[MAX_DEPTH]; /* the text of key zs_lo, once read (else NULL) */
  /* Rows of depth below cap_rows keep only their cells of at most cap_val (cap_row): the
   * restricted walk of skip_search, whose pass has distance cap_val + 1. */
  size_t cap_rows;
  unsigned cap_val;
  /* The records of skip table sk_t whose key has q's first code point: [sk_lo, sk_hi),
   * found once per query (sk_t is SG__SKIP_TABLES until then). */
  unsigned sk_t;
  uint64_t sk_lo, sk_hi;
  /* sk_miss[x][c] is 1 for a byte c below 0x80 that no code point of q[x - d .. x + d]
   * is, the columns the code point x of a skip record can be matched with in the pass at
   * distance d (1 <= x < L), else 0 (skip_runs' filter, for heads of ASCII only); rows L
   * to 4 are all 0. */
  uint8_t sk_miss[SG__SKIP_MAX_D][256];
  /* qsuf[j]: the sg__cp_bit of every code point of q[j..n) (for reachable). */
  uint64_t qsuf[SG_TYPO_MAX_Q + 1];
} tl;

#define QP (tl.qpad + 4)

/* The least cell of row r: sg__osa_min without its bounds, since in every row this file
 * computes the cells of columns outside [0, n] hold SG__CAP (sg__osa_row0 and the steps
 * set them so; cap_row and skip_runs only raise cells to at most SG__CAP or lower cells
 * of columns inside q), which never lowers the least cell below what sg__osa_min gives. */
static inline unsigned row_min(const sg__osa_row *r) {
  unsigned m = r->c[0];
  for (size_t b = 1; b < SG__BAND; b++) m = r->c[b] < m ? r->c[b] : m;
  return m;
}

static inline const char *key_text(const locale_view *v, uint64_t i) {
  return v->text + sg__rd32(v->keys + i * SG__KEY_SIZE);
}

/* The first key after i (i < r) in [i, r) that does not start with s[0..b): a galloping
 * search, since most runs are short. */
static uint64_t run_end(const locale_view *v, uint64_t i, uint64_t r, const char *s, size_t b) {
  uint64_t lo = i + 1, hi = r, step = 1;
  while (i + step < r) {
    if (strncmp(key_text(v, i + step), s, b) != 0) {
      hi = i + step;
      break;
    }
    lo = i + step + 1;
    step *= 2;
  }
  while (lo < hi) {
    uint64_t m = lo + (hi - lo) / 2;
    if (strncmp(key_text(v, m), s, b) == 0)
      lo = m + 1;
    else
      hi = m;
  }
  return lo;
}

/* run_end from the stored LCP bytes: the run is usually a few keys (longer runs are
 * trie nodes), so a short linear look, then the galloping search past 16 keys or when
 * b is beyond what the bytes can tell. s is key i's text, or NULL when not read yet. */
static uint64_t run_end_lcp(const locale_view *v, uint64_t i, uint64_t r, const char *s, size_t b) {
  if (b >= SG__LCP_CAP) return run_end(v, i, r, s ? s : key_text(v, i), b);
  uint64_t e = i + 1;
  for (unsigned step = 0; e < r && v->lcp[e] >= b; e++)
    if (++step == 16) return run_end(v, e, r, s ? s : key_text(v, i), b);
  return e;
}

/* Bytes of the UTF-8 encoding of cp (a decoded malformed byte counts one, as decoded). */
static inline uint32_t cp_bytes(uint32_t cp) {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : cp < 0x110000 ? 4 : 1;
}

/* Can a key below a node, whose row at depth i is r and whose continuations use only
 * code points with bits in sig, still come within thr of q? From cell (i, j) the rest of
 * q, q[j..n), must be matched by the continuation: each of its code points that never
 * occurs there costs an edit. So some cell needs D[i][j] + (those code points) <= thr.
 * This implies the row's least cell is at most thr, and prunes far more near the root,
 * where every short prefix is within two edits of something. */
static bool reachable(const sg__osa_row *r, size_t i, size_t n, uint64_t sig, unsigned thr) {
  size_t jlo = i > SG_TYPO_MAX_K ? i - SG_TYPO_MAX_K : 0;
  if (jlo > n) return false;
  /* Usually every code point of q[jlo..n) occurs below the node: then no cell pays for
   * a missing one, and the row's least cell decides. */
  if (!(tl.qsuf[jlo] & ~sig)) return row_min(r) <= thr;
  unsigned missing = 0;
  /* missing counts the absent code points of q[j..n) as j goes down to jlo; once it
   * passes thr, no cell further left can be within thr. */
  for (size_t j = n;; j--) {
    if (j <= i + SG_TYPO_MAX_K) {
      unsigned cell = r->c[j + SG_TYPO_MAX_K - i];
      if (cell + missing <= thr) return true;
    }
    if (j == jlo) return false;
    if (!(sig & sg__cp_bit(tl.q[j - 1]))) {
      if (++missing > thr) return false;
    }
  }
}

/* ---- the zero-slack walk ("Rows without slack" and "Next masks" above) ---------- */

#define NO_NODE UINT32_MAX
#define NO_CP UINT32_MAX

/* Branch and bound: with 10 items found, a node whose best key could not enter the list
 * at distance thr holds nothing for it. */
static inline bool bounded_out(const locale_view *v, uint32_t node, unsigned thr,
                               const sg__top10 *top) {
  if (top->n < SG_BUCKET_ITEMS) return false;
  uint32_t w = sg__trie_rd(v, node, SG__T_BEST);
  uint64_t bound = (uint64_t)thr << EDITS_SHIFT | (uint64_t)(w >> SG__KEY_TIER_SHIFT) << 32 |
                   (w & SG__KEY_ORD_MASK);
  return bound >= top->v[SG_BUCKET_ITEMS - 1];
}

/* In the restricted walk of skip_search, a row of depth below tl.cap_rows keeps only its
 * cells of at most tl.cap_val (d - 1 in the pass at distance d): the walk then follows
 * exactly the alignments that spend at most d - 1 edits on the key's first L code points
 * (skip_search).
 *
 * The first row past them (d == cap_rows, row L + 1) gets back one kind of cell the cap
 * took: a swap from a kept cell (L, j - 2) into row L + 2 has, in the plain DP, a cell
 * (L + 1, j) no higher than its own cost (through (L, j - 1), skipping q[j - 2], then
 * t_{L+1} = q[j - 1]), and the walk's pruning (least cell, reachable) relies on that:
 * no row has a cell below the least of the row before, the swap included. The cap can
 * take (L, j - 1) away, so that cell is restored here from (L, j - 2) + 1. It is the
 * cost of a real alignment, so nothing it lets the walk find is wrong. */
static inline void cap_row(size_t d, size_t n) {
  if (d < tl.cap_rows) {
#if defined(__SSE2__) && SG_TYPO_MAX_K == 2
    const __m128i x = _mm_cvtsi64_si128((long long)sg__osa_pack(&tl.row[d]));
    const __m128i over = _mm_cmpgt_epi8(x, _mm_set1_epi8((char)tl.cap_val));
    uint64_t o = (uint64_t)_mm_cvtsi128_si64(
        _mm_or_si128(_mm_andnot_si128(over, x), _mm_and_si128(over, _mm_set1_epi8(SG__CAP))));
    memcpy(tl.row[d].c, &o, SG__BAND);
#else
    for (size_t b = 0; b < SG__BAND; b++)
      if (tl.row[d].c[b] > tl.cap_val) tl.row[d].c[b] = SG__CAP;
#endif
  } else if (d == tl.cap_rows && d > 0) {
    /* Cell b of row d is column j = d - K + b; (d - 1, j - 2) is cell b - 1 of row d - 1. */
    for (size_t b = 1; b < SG__BAND; b++) {
      size_t j = d - SG_TYPO_MAX_K + b; /* d > K: no wrap */
      if (j < 2 || j > n || tl.cp[d] != tl.q[j - 1]) continue;
      unsigned v = tl.row[d - 1].c[b - 1] + 1u;
      if (v < tl.row[d].c[b]) tl.row[d].c[b] = (uint8_t)v;
    }
  }
}

/* Computes row d (d >= 1) from the rows above it for the code point cp; returns its
 * last cell, the distance of q to the prefix of d code points. */
static inline unsigned step_row(size_t d, uint32_t cp, size_t n) {
  tl.cp[d] = cp;
  tl.bo[d] = tl.bo[d - 1] + cp_bytes(cp);
  sg__osa_step_pad(&tl.row[d], &tl.row[d - 1], d >= 2 ? &tl.row[d - 2] : NULL, d, cp,
                   d >= 2 ? tl.cp[d - 1] : 0, QP, n);
  cap_row(d, n);
  return sg__osa_last(&tl.row[d], d, n);
}

/* The cells of row c equal to thr, and those below it, as bit masks over the band (bit b
 * for cell b). */
static inline void band_masks(size_t c, unsigned thr, unsigned *eq, unsigned *lt) {
#if defined(__SSE2__) && SG_TYPO_MAX_K == 2
  const __m128i th = _mm_set1_epi8((char)thr);
  const __m128i x = _mm_cvtsi64_si128((long long)sg__osa_pack(&tl.row[c]));
  *eq = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, th)) & ((1u << SG__BAND) - 1);
  *lt = (unsigned)_mm_movemask_epi8(_mm_cmplt_epi8(x, th)) & ((1u << SG__BAND) - 1);
#else
  *eq = *lt = 0;
  for (size_t b = 0; b < SG__BAND; b++) {
    *eq |= (unsigned)(tl.row[c].c[b] == thr) << b;
    *lt |= (unsigned)(tl.row[c].c[b] < thr) << b;
  }
#endif
}

/* The code points that can keep a child of the zero-slack row c within thr, as a mask:
 * bit b stands for q[c - 3 + b] (the diagonal reaches q[c - 2 .. c + 2], the swap
 * q[c - 3 .. c + 1]). */
static unsigned zs_candidates(size_t c, size_t n, unsigned thr) {
  unsigned eq, lt;
  band_masks(c, thr, &eq, &lt);
  /* Diagonal: cell b is column j = c - K + b, for j in [0, n - 1]. */
  size_t b0 = c < SG_TYPO_MAX_K ? SG_TYPO_MAX_K - c : 0;
  size_t b1 = n + SG_TYPO_MAX_K > c ? n + SG_TYPO_MAX_K - c : 0; /* one past the last */
  if (b1 > SG__BAND) b1 = SG__BAND;
  unsigned mask = (eq & (b1 > b0 ? (1u << b1) - (1u << b0) : 0)) << 1;
  if (c >= 1) {
    /* Swap: cell b of row c - 1 (below thr) is column j = c - 1 - K + b, for j in
     * [0, n - 2], when the node's code point is q[j + 1]: the child's is then q[j]. */
    band_masks(c - 1, thr, &eq, &lt);
    b0 = c < SG_TYPO_MAX_K + 1 ? SG_TYPO_MAX_K + 1 - c : 0;
    uint32_t t = tl.cp[c];
    for (unsigned m = lt & (b1 > b0 ? (1u << b1) - (1u << b0) : 0); m; m &= m - 1) {
      unsigned b = (unsigned)__builtin_ctz(m);
      if (t == tl.q[c - SG_TYPO_MAX_K + b]) mask |= 1u << b;
    }
  }
  return mask;
}

/* Drops from the candidate mask of level c the code points that no key of node x has
 * next (its next mask): a lookup for them could only come back empty. */
static unsigned zs_filter(const locale_view *v, uint32_t x, size_t c, unsigned mask) {
  if (x == NO_NODE) return mask;
  uint64_t next = sg__trie_rd(v, x, SG__T_NEXT_LO) | (uint64_t)sg__trie_rd(v, x, SG__T_NEXT_HI)
                                                         << 32;
  for (unsigned r = mask; r; r &= r - 1) {
    unsigned b = (unsigned)__builtin_ctz(r);
    if (!(next & sg__cp_bit(tl.q[c - 3 + b]))) mask &= ~(1u << b);
  }
  return mask;
}

/* Takes the next candidate code point of level c off *mask (with every other bit that
 * names the same code point), or returns NO_CP. */
static inline uint32_t zs_take(size_t c, uint8_t *mask) {
  if (!*mask) return NO_CP;
  unsigned b = (unsigned)__builtin_ctz(*mask);
  uint32_t cp = tl.q[c - 3 + b];
  unsigned m = *mask & ~(1u << b);
  for (unsigned r = m; r; r &= r - 1) {
    unsigned o = (unsigned)__builtin_ctz(r);
    if (tl.q[c - 3 + o] == cp) m &= ~(1u << o);
  }
  *mask = (uint8_t)m;
  return cp;
}

/* UTF-8 of cp into out (a decoded malformed byte is that byte); returns its length. */
static size_t cp_encode(uint32_t cp, unsigned char *out) {
  if (cp < 0x80) {
    out[0] = (unsigned char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (unsigned char)(0xC0 | cp >> 6);
    out[1] = (unsigned char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (unsigned char)(0xE0 | cp >> 12);
    out[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
    out[2] = (unsigned char)(0x80 | (cp & 0x3F));
    return 3;
  }
  if (cp < 0x110000) {
    out[0] = (unsigned char)(0xF0 | cp >> 18);
    out[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
  }
  out[0] = (unsigned char)(cp - 0x110000);
  return 1;
}

static uint64_t run_end_lcp(const locale_view *v, uint64_t i, uint64_t r, const char *s, size_t b);

/* The keys of [lo, hi), which share their first off bytes, whose next code point is cp
 * (UTF-8 enc[0..elen)): [*sl, *sh), empty when none. */
static void key_subrange(const locale_view *v, uint64_t lo, uint64_t hi, size_t off,
                         const unsigned char *enc, size_t elen, uint64_t *sl, uint64_t *sh) {
  uint64_t b = lo, e = hi;
  while (b < e) {
    uint64_t m = b + (e - b) / 2;
    if (strncmp(key_text(v, m) + off, (const char *)enc, elen) < 0)
      b = m + 1;
    else
      e = m;
  }
  *sl = *sh = b;
  if (b == hi) return;
  const char *s = key_text(v, b);
  if (strncmp(s + off, (const char *)enc, elen) != 0) return;
  *sh = run_end_lcp(v, b, hi, s, off + elen);
}

/* Ranges up to this many keys are searched by their LCP and branch bytes (sequential
 * bytes), longer ones by binary search over their text. */
#define SCAN_MAX 256

static inline unsigned char branch(const locale_view *v, uint64_t i, unsigned which) {
  return v->branch[i * SG__BRANCH_SIZE + which];
}

/* The byte at off of key lo, which shares its first off bytes with the keys after it:
 * from its branch bytes when its LCP is off or off - 1, else from its text (kept in
 * *first, which holds that text already when not NULL). off < SG__LCP_CAP. */
static unsigned char first_byte(const locale_view *v, uint64_t lo, size_t off, const char **first) {
  if (*first) return (unsigned char)(*first)[off];
  if (v->lcp[lo] == off) return branch(v, lo, 0);
  if (v->lcp[lo] + 1u == off) return branch(v, lo, 1);
  *first = key_text(v, lo);
  return (unsigned char)(*first)[off];
}

/* key_subrange for the keys whose byte at off is c alone, from the LCP and branch bytes:
 * inside [lo, hi) a run of keys with the same byte at off starts where the stored LCP is
 * exactly off, and its branch byte is that byte; the first run's byte is first_byte's,
 * needed only when c could be it. off < SG__LCP_CAP. */
static inline void byte_subrange(const locale_view *v, uint64_t lo, uint64_t hi, size_t off,
                                 unsigned char c, const char **first, uint64_t *sl, uint64_t *sh) {
  *sl = *sh = lo;
  uint64_t i = lo + 1;
  while (i < hi && v->lcp[i] != off) i++;
  /* [lo, i) is the first run. */
  if (i == hi || branch(v, i, 0) > c) {
    if (first_byte(v, lo, off, first) == c) *sh = i;
    return;
  }
  for (;;) {
    uint64_t start = i;
    unsigned char b = branch(v, start, 0);
    for (i = start + 1; i < hi && v->lcp[i] != off; i++) {}
    if (b == c) {
      *sl = start;
      *sh = i;
      return;
    }
    if (i == hi || branch(v, i, 0) > c) return;
  }
}

/* key_subrange through byte_subrange where that is cheaper. *first is the text of key
 * lo when the caller has it, else NULL; it is set to the text of key lo when read here.
 * A walk down one run keeps asking about the same first key, so its text is read once. */
static inline void next_subrange(const locale_view *v, uint64_t lo, uint64_t hi, size_t off,
                                 const unsigned char *enc, size_t elen, const char **first,
                                 uint64_t *sl, uint64_t *sh) {
  if (off >= SG__LCP_CAP || hi - lo > SCAN_MAX) {
    key_subrange(v, lo, hi, off, enc, elen, sl, sh);
    return;
  }
  byte_subrange(v, lo, hi, off, enc[0], first, sl, sh);
  if (elen > 1 && *sl < *sh) key_subrange(v, *sl, *sh, off, enc, elen, sl, sh);
}

/* The child of node x (at depth c) for cp, or NO_NODE with [*sl, *sh) the keys of x
 * between its children where a run of at most SG__TRIE_MIN keys for cp would lie. */
static uint32_t child_for(const locale_view *v, uint32_t x, uint32_t cp, uint64_t *sl,
                          uint64_t *sh) {
  uint32_t nch = sg__trie_rd(v, x, SG__T_N), first = sg__trie_rd(v, x, SG__T_FIRST);
  uint32_t b = sg__trie_lower(v, first, nch, cp);
  if (b < nch && sg__trie_rd(v, first + b, SG__T_CP) == cp) {
    *sl = sg__trie_rd(v, first + b, SG__T_LO);
    *sh = sg__trie_rd(v, first + b, SG__T_HI);
    return first + b;
  }
  sg__trie_gap(v, x, first, nch, b, sl, sh);
  return NO_NODE;
}

/* The subtree of the keys [lo, hi) (node x, or NO_NODE) below the zero-slack row c: only
 * the code points zs_candidates names are looked up, depth first with an explicit stack.
 * Same merging rule as scan_keys: a run whose distance reaches thr is added, and every
 * row of this walk stays without slack or dies. */
static void zs_walk(const sg_artifact *a, const locale_view *v, size_t n, uint64_t lo, uint64_t hi,
                    uint32_t x, const char *first0, size_t c, unsigned thr, sg__top10 *top) {
  size_t d = c;
  tl.zs_first[d] = first0;
  tl.zs_lo[d] = (uint32_t)lo;
  tl.zs_hi[d] = (uint32_t)hi;
  tl.zs_node[d] = x;
  tl.zs_left[d] = (uint8_t)zs_filter(v, x, d, zs_candidates(d, n, thr));
  for (;;) {
    uint32_t cp = zs_take(d, &tl.zs_left[d]);
    if (cp == NO_CP) {
      if (d == c) return;
      d--;
      continue;
    }
    size_t e = d + 1;
    if (e >= MAX_DEPTH) continue; /* unreachable: rows past n + 2 exceed every budget */
    uint64_t sl, sh;
    uint32_t ch = NO_NODE;
    const char *first = NULL; /* the text of key sl, when known */
    if (tl.zs_node[d] != NO_NODE) {
      ch = child_for(v, tl.zs_node[d], cp, &sl, &sh);
      if (ch == NO_NODE && sl < sh) {
        unsigned char enc[4];
        size_t elen = cp_encode(cp, enc);
        uint64_t gap = sl;
        if (gap == tl.zs_lo[d]) first = tl.zs_first[d];
        next_subrange(v, sl, sh, tl.bo[d], enc, elen, &first, &sl, &sh);
        if (gap == tl.zs_lo[d]) tl.zs_first[d] = first;
        if (sl != gap) first = NULL;
      }
    } else {
      unsigned char enc[4];
      size_t elen = cp_encode(cp, enc);
      first = tl.zs_first[d];
      next_subrange(v, tl.zs_lo[d], tl.zs_hi[d], tl.bo[d], enc, elen, &first, &sl, &sh);
      tl.zs_first[d] = first;
      if (sl != tl.zs_lo[d]) first = NULL;
    }
    if (sl >= sh) continue;
    if (ch != NO_NODE && bounded_out(v, ch, thr, top)) continue;
    unsigned last = step_row(e, cp, n);
    if (last <= thr) {
      if (last == thr) sg__range_top(a, v, sl, sh, (uint64_t)thr << EDITS_SHIFT, top);
      continue;
    }
    if (row_min(&tl.row[e]) > thr) continue;
    if (ch != NO_NODE) {
      uint64_t sig = sg__trie_rd(v, ch, SG__T_SIG_LO) | (uint64_t)sg__trie_rd(v, ch, SG__T_SIG_HI)
                                                            << 32;
      if (!reachable(&tl.row[e], e, n, sig, thr)) continue;
    }
    d = e;
    tl.zs_lo[d] = (uint32_t)sl;
    tl.zs_hi[d] = (uint32_t)sh;
    tl.zs_node[d] = ch;
    tl.zs_left[d] = (uint8_t)zs_filter(v, ch, d, zs_candidates(d, n, thr));
    tl.zs_first[d] = first;
  }
}

/* True when row c (least cell at most thr) has no slack left. */
static inline bool no_slack(size_t c, size_t n, unsigned thr) { return row_min(&tl.row[c]) == thr; }

/* Walks the keys [l, r), which all share the prefix of rows 0..c0 (its bytes end at
 * tl.bo[c0]), as an implicit trie: consecutive keys share the DP rows of their common
 * prefix. Along each key the walk stops at the first depth whose distance D[i][n] is at
 * most thr (every key below that node, the run of keys sharing its prefix, is within
 * D[i][n]) or whose row exceeds thr everywhere (no key below can match), and skips the
 * run. Runs reached with distance exactly thr are merged into top; smaller distances
 * were found by the passes before (exact, then thr = 1), and keys below them at a
 * smaller distance still by those passes, so each key ends up at its least distance. */
static void scan_keys(const sg_artifact *a, const locale_view *v, size_t n, uint64_t l, uint64_t r,
                      size_t c0, unsigned thr, sg__top10 *top) {
  if (no_slack(c0, n, thr)) {
    zs_walk(a, v, n, l, r, NO_NODE, NULL, c0, thr, top);
    return;
  }
  /* Key texts are read only where the LCP and branch bytes do not tell (format.h): in
   * the common case, a key that leaves the one before at the depth the walk resumes
   * from, its first two bytes there are its branch bytes. */
  const char *prev = NULL; /* the previous key's text, when read */
  uint64_t prev_i = l;
  bool have_prev = false;
  size_t top_row = c0;
  for (uint64_t i = l; i < r;) {
    const char *s = NULL; /* key i's text, once read */
    size_t lcp_i = v->lcp[i];
    size_t c = c0;
    if (have_prev) {
      /* The keys skipped since prev all share more with it than key i does, so the
       * stored LCP of key i is its LCP with prev (read from the text past the cap). */
      size_t lcp = lcp_i;
      if (lcp >= SG__LCP_CAP) {
        if (!prev) prev = key_text(v, prev_i);
        s = key_text(v, i);
        lcp = tl.bo[c0];
        while (prev[lcp] && prev[lcp] == s[lcp]) lcp++;
      }
      c = top_row;
      while (c > c0 && tl.bo[c] > lcp) c--;
    }
    for (;;) {
      uint32_t cp;
      size_t cl, off = tl.bo[c];
      unsigned char b0 = lcp_i < SG__LCP_CAP ? branch(v, i, 0) : 0x80;
      if (!s && off == lcp_i && b0 < 0x80) {
        cp = b0;
        cl = b0 != 0;
      } else if (!s && off == lcp_i + 1 && b0 != 0 && b0 < 0x80 && branch(v, i, 1) < 0x80) {
        cp = branch(v, i, 1);
        cl = cp != 0;
      } else {
        if (!s) s = key_text(v, i);
        cl = sg__utf8_next(s + off, &cp);
      }
      if (cl == 0) { /* the key ends without a match; so do the keys equal to it */
        prev = s;
        prev_i = i;
        have_prev = true;
        top_row = c;
        if (off < SG__LCP_CAP) { /* the equal keys: an LCP of off and a NUL there */
          for (i++; i < r && v->lcp[i] == off && branch(v, i, 0) == 0; i++) {}
        } else {
          i = run_end(v, i, r, s ? s : key_text(v, i), off + 1u);
        }
        break;
      }
      size_t d = c + 1;
      tl.cp[d] = cp;
      tl.bo[d] = tl.bo[c] + (uint32_t)cl;
      sg__osa_step_pad(&tl.row[d], &tl.row[c], d >= 2 ? &tl.row[d - 2] : NULL, d, cp,
                       d >= 2 ? tl.cp[d - 1] : 0, QP, n);
      cap_row(d, n);
      c = d;
      unsigned last = sg__osa_last(&tl.row[c], c, n);
      unsigned least = row_min(&tl.row[c]);
      if (last <= thr || least >= thr) {
        uint64_t e = run_end_lcp(v, i, r, s, tl.bo[c]);
        if (last == thr)
          sg__range_top(a, v, i, e, (uint64_t)thr << EDITS_SHIFT, top);
        else if (last > thr && least == thr) /* no slack: look up the continuations */
          zs_walk(a, v, n, i, e, NO_NODE, s, c, thr, top);
        prev = s;
        prev_i = i;
        have_prev = true;
        top_row = c;
        i = e;
        break;
      }
    }
  }
}

/* No slack under the cap (issue 23). In the capped walk of skip_search every cell above
 * tl.cap_val (d - 1 in the pass at distance d) of a row of depth below tl.cap_rows is
 * raised to SG__CAP (cap_row), so a capped row whose least cell is tl.cap_val is, for
 * its children of depth below tl.cap_rows, a row without slack at that budget: a
 * child's cell stays at most tl.cap_val only through a match on the diagonal from a
 * cell at that value or a swap from a lower cell of the row before (the argument of
 * "Rows without slack", with thr = tl.cap_val), and a child none of whose cells does is
 * capped to SG__CAP everywhere, so the plain walk drops it (its last cell is over thr
 * and it is not reachable), and every key below it with it. So the children of node x
 * (depth c) that the walk steps can be limited to the code points zs_candidates names
 * for that budget, less those x's next mask rules out: this returns that mask, or
 * NO_CAND where every child must be stepped (outside the capped rows, or a row that
 * still has a cell below tl.cap_val). The children looked up get the same rows as
 * before, so the walk merges the same ranges; only children that die at their first
 * capped row are not visited. */
#define NO_CAND UINT16_MAX
static uint16_t capped_candidates(const locale_view *v, uint32_t x, size_t c, size_t n) {
  if (c + 1 >= tl.cap_rows || row_min(&tl.row[c]) != tl.cap_val) return NO_CAND;
  return (uint16_t)zs_filter(v, x, c, zs_candidates(c, n, tl.cap_val));
}

/* One pass with distance thr over the subtree of trie node root at depth c0 (rows
 * 0..c0 set), depth first over the materialised trie nodes (the runs of more than
 * SG__TRIE_MIN keys, whose code points are in the node records: no key text is read),
 * and over the keys between them with scan_keys. Same stopping rules as scan_keys. */
static void trie_pass(const sg_artifact *a, const locale_view *v, size_t n, uint32_t root,
                      size_t c0, unsigned thr, sg__top10 *top) {
  if (no_slack(c0, n, thr)) {
    zs_walk(a, v, n, sg__trie_rd(v, root, SG__T_LO), sg__trie_rd(v, root, SG__T_HI), root, NULL, c0,
            thr, top);
    return;
  }
  size_t sp = 0;
  tl.st_node[0] = root;
  tl.st_next[0] = 0;
  tl.st_pos[0] = sg__trie_rd(v, root, SG__T_LO);
  tl.st_cand[0] = capped_candidates(v, root, c0, n);
  while (true) {
    uint32_t x = tl.st_node[sp];
    size_t c = c0 + sp; /* the rows of x's prefix end at depth c */
    uint32_t ch, lo, chi;
    if (tl.st_cand[sp] != NO_CAND) {
      /* Only the candidate code points can keep a capped row alive (capped_candidates):
       * look each up among x's children, or among the keys between them. */
      uint8_t left = (uint8_t)tl.st_cand[sp];
      uint32_t cp = zs_take(c, &left);
      tl.st_cand[sp] = left;
      if (cp == NO_CP) {
        if (sp == 0) return;
        sp--;
        continue;
      }
      uint64_t sl, sh;
      ch = child_for(v, x, cp, &sl, &sh);
      if (ch == NO_NODE) {
        if (sl < sh) {
          unsigned char enc[4];
          size_t elen = cp_encode(cp, enc);
          const char *kfirst = NULL;
          next_subrange(v, sl, sh, tl.bo[c], enc, elen, &kfirst, &sl, &sh);
          if (sl < sh) scan_keys(a, v, n, sl, sh, c, thr, top);
        }
        continue;
      }
      lo = (uint32_t)sl;
      chi = (uint32_t)sh;
    } else {
      uint32_t nch = sg__trie_rd(v, x, SG__T_N), first = sg__trie_rd(v, x, SG__T_FIRST);
      uint32_t hi = sg__trie_rd(v, x, SG__T_HI);
      if (tl.st_next[sp] == nch) { /* the keys after the last child, then up */
        if (tl.st_pos[sp] < hi) scan_keys(a, v, n, tl.st_pos[sp], hi, c, thr, top);
        if (sp == 0) return;
        sp--;
        continue;
      }
      ch = first + tl.st_next[sp]++;
      lo = sg__trie_rd(v, ch, SG__T_LO);
      chi = sg__trie_rd(v, ch, SG__T_HI);
      if (tl.st_pos[sp] < lo) scan_keys(a, v, n, tl.st_pos[sp], lo, c, thr, top);
      if (chi > tl.st_pos[sp]) tl.st_pos[sp] = chi;
    }
    if (bounded_out(v, ch, thr, top)) continue;
    uint32_t cp = sg__trie_rd(v, ch, SG__T_CP);
    size_t d = c + 1;
    if (d >= MAX_DEPTH) continue; /* unreachable: rows past n + 2 exceed every budget */
    unsigned last = step_row(d, cp, n);
    if (last <= thr) {
      if (last == thr) sg__range_top(a, v, lo, chi, (uint64_t)thr << EDITS_SHIFT, top);
      continue;
    }
    uint64_t sig = sg__trie_rd(v, ch, SG__T_SIG_LO) | (uint64_t)sg__trie_rd(v, ch, SG__T_SIG_HI)
                                                          << 32;
    if (!reachable(&tl.row[d], d, n, sig, thr)) continue;
    if (no_slack(d, n, thr)) {
      zs_walk(a, v, n, lo, chi, ch, NULL, d, thr, top);
      continue;
    }
    sp++;
    tl.st_node[sp] = ch;
    tl.st_next[sp] = 0;
    tl.st_pos[sp] = lo;
    tl.st_cand[sp] = capped_candidates(v, ch, d, n);
  }
}

/* One pass with distance thr over the keys that begin with q's first code point, whose
 * UTF-8 is nq[0..first). */
static void typo_pass(const sg_artifact *a, const locale_view *v, size_t n, const char *nq,
                      size_t first, unsigned thr, sg__top10 *top) {
  sg__osa_row0(&tl.row[0], n);
  cap_row(0, n);
  tl.bo[0] = 0;
  unsigned last0 = sg__osa_last(&tl.row[0], 0, n);
  if (v->n_trie == 0) return; /* no keys */
  /* The root's child for q's first code point, when materialised. */
  uint32_t nch = sg__trie_rd(v, 0, SG__T_N), first_child = sg__trie_rd(v, 0, SG__T_FIRST);
  uint32_t b = sg__trie_lower(v, first_child, nch, tl.q[0]);
  bool node = b < nch && sg__trie_rd(v, first_child + b, SG__T_CP) == tl.q[0];
  uint64_t l, r;
  if (node) {
    l = sg__trie_rd(v, first_child + b, SG__T_LO);
    r = sg__trie_rd(v, first_child + b, SG__T_HI);
  } else {
    sg__prefix_range(v, nq, first, &l, &r);
  }
  if (l >= r) return;
  if (last0 <= thr) { /* a query of at most thr code points: every key is in */
    if (last0 == thr) sg__range_top(a, v, l, r, (uint64_t)thr << EDITS_SHIFT, top);
    return;
  }
  if (!node) {
    scan_keys(a, v, n, l, r, 0, thr, top);
    return;
  }
  /* Row 1 for the first code point, then the node's subtree. */
  tl.cp[1] = tl.q[0];
  tl.bo[1] = (uint32_t)first;
  sg__osa_step_pad(&tl.row[1], &tl.row[0], NULL, 1, tl.q[0], 0, QP, n);
  cap_row(1, n);
  unsigned last1 = sg__osa_last(&tl.row[1], 1, n);
  if (last1 <= thr) {
    if (last1 == thr) sg__range_top(a, v, l, r, (uint64_t)thr << EDITS_SHIFT, top);
    return;
  }
  trie_pass(a, v, n, first_child + b, 1, thr, top);
}

/* ---- two edits near the start (above) ------------------------------------------ */

/* The key of skip record r of table t whose head is not ASCII: stored, or computed from
 * its head's code points (format.h). */
static uint64_t skip_rec_key_text(const unsigned char *r, unsigned t) {
  if (r[0] == SG__SKIP_KEYED) {
    uint64_t k = 0;
    for (unsigned x = 7; x > 0; x--) k = k << 8 | r[x];
    return k;
  }
  const unsigned L = sg__skip_l[t], G = sg__skip_g[t];
  uint32_t cps[SG__SKIP_MAX_D] = {0};
  char head[SG__SKIP_PFX + 1] = {0};
  memcpy(head, r, SG__SKIP_PFX);
  size_t o = 0;
  for (unsigned x = 0; x < L + G; x++) o += sg__utf8_next(head + o, &cps[x]);
  return sg__skip_key(cps[0], cps + L, G);
}

/* The key of skip record r of table t (format.h). For a head of ASCII (SG__SKIP_KEYED
 * is not) a byte is a code point, below U+4000, so its 14 bits are itself: sg__skip_key
 * spelled out, inline, as it runs for every record a binary search or a run of records
 * compares. */
static inline uint64_t skip_rec_key(const unsigned char *r, unsigned t) {
  _Static_assert(SG__SKIP_MAX_G == 3, "sg__skip_key's three code points");
  uint64_t w;
  memcpy(&w, r, 8);
  if (w & 0x8080808080808080ull) return skip_rec_key_text(r, t);
  const unsigned L = sg__skip_l[t];
  uint64_t k = (uint64_t)r[0] << 14 | r[L];
  k = k << 14 | r[L + 1];
  return k << 14 | (sg__skip_g[t] > 2 ? r[L + 2] : 0);
}

/* The first record of skip table t in [b, e) whose key is at least key. */
static uint64_t skip_lower(const locale_view *v, unsigned t, uint64_t b, uint64_t e, uint64_t key) {
  const unsigned char *recs = v->skip[t];
  const size_t size = v->skip_size;
  uint64_t n = e - b;
  while (n > 0) {
    uint64_t half = n / 2, right = n - half - 1;
    /* Both records the next step may read, fetched while this one is compared. */
    __builtin_prefetch(recs + (b + half / 2) * size);
    __builtin_prefetch(recs + (b + half + 1 + right / 2) * size);
    if (skip_rec_key(recs + (b + half) * size, t) < key) {
      b += half + 1;
      n = right;
    } else {
      n = half;
    }
  }
  return b;
}

/* The runs of the skip records under key (within [tl.sk_lo, tl.sk_hi), the records of
 * q's first code point), checked and searched as above. */
static void skip_runs(const sg_artifact *a, const locale_view *v, size_t n, unsigned t,
                      uint64_t key, unsigned thr, sg__top10 *top) {
  const size_t L = sg__skip_l[t], D = sg__skip_l[t] + sg__skip_g[t];
  const unsigned char *recs = v->skip[t];
  const size_t size = v->skip_size;
  /* The high bits of a head's first L bytes, read by sg__rd64 (SG__SKIP_KEYED sets one). */
  const uint64_t ascii_l = 0x8080808080808080ull >> 8 * (8 - L);
  uint64_t b = skip_lower(v, t, tl.sk_lo, tl.sk_hi, key);
  /* The records under one key are in key order, so consecutive ones often share their
   * first code points: their rows are reused, and a record that shares the code points
   * whose row ended the one before ends there too. */
  char prev[SG__SKIP_PFX + 1] = {0}; /* the previous record's prefix, when inline */
  size_t valid = 0, dead = 0;        /* its rows 0..valid are set; the row that ended it (or 0) */
  sg__osa_row0(&tl.row[0], n);
  tl.bo[0] = 0;
  for (; b < tl.sk_hi && skip_rec_key(recs + b * size, t) == key; b++) {
    const unsigned char *r = recs + b * size;
    /* A record whose code point x (x < L) is none of q[x - thr .. x + thr], the columns
     * an alignment within thr can match it with, pays an edit for it (a substitution or
     * a deletion; a swap matches both its code points): more than thr such code points
     * and no alignment at row L is within thr, so the rows below would drop the record.
     * Decided from its head when the first L bytes are ASCII (one byte, one code point),
     * before any row; the rows kept from the record before are untouched. */
    if (!(sg__rd64(r) & ascii_l)) {
      unsigned missing =
          tl.sk_miss[1][r[1]] + tl.sk_miss[2][r[2]] + tl.sk_miss[3][r[3]] + tl.sk_miss[4][r[4]];
      if (missing > thr) continue;
    }
    /* A node's keys are read from the trie only when needed: most records end below. */
    uint32_t lo = 0, hi = 0, node = sg__skip_run(v, r, &lo, &hi);
    bool spanned = node == NO_NODE;
    /* The run's first code points from the record when they fit, else from the text. */
    char pfx[SG__SKIP_PFX + 1] = {0};
    const char *text = NULL, *s = pfx;
    if (r[0] != SG__SKIP_KEYED) memcpy(pfx, r, SG__SKIP_PFX);
    if (!pfx[0]) {
      if (!spanned) sg__trie_span(v, node, &lo, &hi);
      spanned = true;
      s = text = key_text(v, lo);
    }
    size_t same = 0; /* rows shared with the previous record */
    if (pfx[0] && prev[0]) {
      size_t bl = 0;
      while (bl < SG__SKIP_PFX && pfx[bl] == prev[bl] && pfx[bl]) bl++;
      while (same < valid && tl.bo[same + 1] <= bl) same++;
      if (dead && same >= dead) continue;
      /* Rows L - 1 and L were raised for the previous record: shared only as a pair. */
      if (same + 1 == L) same = L - 2;
    }
    memcpy(prev, pfx, sizeof prev);
    size_t d = same + 1;
    bool ended = false;
    for (; d <= D; d++) {
      uint32_t cp;
      size_t l = sg__utf8_next(s + tl.bo[d - 1], &cp);
      if (l == 0) { /* only on a damaged file */
        ended = true;
        break;
      }
      if (d == 1 && cp != tl.q[0]) { /* another first code point, same key bits */
        tl.bo[1] = (uint32_t)l;
        break;
      }
      step_row(d, cp, n);
      if (d == L) {
        for (size_t x = 0; x < SG__BAND; x++) {
          if (tl.row[L - 1].c[x] < thr - 1) tl.row[L - 1].c[x] = (uint8_t)(thr - 1);
          if (tl.row[L].c[x] < thr) tl.row[L].c[x] = (uint8_t)thr;
        }
      }
      /* Before row L the rows are the plain DP's, so a row past the budget ends it too. */
      if (row_min(&tl.row[d]) > thr) break;
    }
    if (ended) {
      prev[0] = '\0';
      valid = d - 1;
      dead = 0;
      continue;
    }
    valid = d <= D ? d : D;
    dead = d <= D ? d : 0;
    if (d <= D) continue;
    if (node != NO_NODE && bounded_out(v, node, thr, top)) continue;
    if (!spanned) sg__trie_span(v, node, &lo, &hi);
    if (sg__osa_last(&tl.row[D], D, n) <= thr)
      sg__range_top(a, v, lo, hi, (uint64_t)thr << EDITS_SHIFT, top);
    else
      zs_walk(a, v, n, lo, hi, node, text, D, thr, top);
  }
}

/* The pass at distance thr through a skip table, when q is long enough for one: table 0
 * from its length on, table 1 below it. An empty table takes the plain walk instead: a
 * table is empty when the artifact was compiled without them (`suggestd compile
 * --without-skip-tables`, which only measures what they cost), or when no key has L + G
 * code points, and then no alignment of cost thr at row L exists either (it covers at
 * least n - thr >= L + G rows), so either way the plain walk finds the same items. */
static bool skip_search(const sg_artifact *a, const locale_view *v, size_t n, const char *nq,
                        size_t first, unsigned thr, sg__top10 *top) {
  unsigned t = n >= sg__skip_min_q(0, thr) ? 0 : 1;
  if (n < sg__skip_min_q(t, thr) || v->n_skip[t] == 0) return false;
  const size_t L = sg__skip_l[t], G = sg__skip_g[t];
  if (tl.sk_t != t) { /* the keys with q's first code point: its 14 bits on top */
    uint64_t k0 = sg__skip_cp14(tl.q[0]) << 14 * SG__SKIP_MAX_G;
    tl.sk_lo = skip_lower(v, t, 0, v->n_skip[t], k0);
    tl.sk_hi = skip_lower(v, t, tl.sk_lo, v->n_skip[t], k0 + (1ull << 14 * SG__SKIP_MAX_G));
    tl.sk_t = t;
  }
  /* skip_runs adds rows 1..4 whatever L is: rows from L on count nothing. */
  _Static_assert(SG__SKIP_MAX_D > 4, "skip_runs reads rows 1..4 of sk_miss");
  for (size_t x = L; x <= 4; x++) memset(tl.sk_miss[x], 0, sizeof tl.sk_miss[x]);
  for (size_t x = 1; x < L; x++) {
    memset(tl.sk_miss[x], 1, 0x80);
    memset(tl.sk_miss[x] + 0x80, 0, 0x80); /* never read: the filter takes ASCII heads */
    for (size_t j = x > thr ? x - thr : 0; j <= x + thr && j < n; j++)
      if (tl.q[j] < 0x80) tl.sk_miss[x][tl.q[j]] = 0;
  }
  tl.cap_rows = L + 1;
  tl.cap_val = thr - 1;
  typo_pass(a, v, n, nq, first, thr, top);
  tl.cap_rows = 0;
  for (size_t j = L - thr; j <= L + thr; j++) /* through row L */
    skip_runs(a, v, n, t, sg__skip_key(tl.q[0], tl.q + j, (unsigned)G), thr, top);
  for (size_t j = L + 2 - thr; j <= L + thr; j++) { /* swapping code points L, L + 1 */
    uint32_t g[SG__SKIP_MAX_G] = {tl.q[j - 2], tl.q[j], G > 2 ? tl.q[j + 1] : 0};
    skip_runs(a, v, n, t, sg__skip_key(tl.q[0], g, (unsigned)G), thr, top);
  }
  return true;
}

/* Decodes nq[0..len) into tl.q; returns the code point count and the first one's byte
 * length in *first, or 0 when it does not fit. */
static size_t decode_query(const char *nq, size_t len, size_t *first) {
  size_t n = 0;
  for (size_t i = 0; i < len;) {
    char tmp[5] = {0};
    memcpy(tmp, nq + i, len - i < 4 ? len - i : 4);
    uint32_t cp;
    size_t l = sg__utf8_next(tmp, &cp);
    if (n == SG_TYPO_MAX_Q) return 0;
    if (n == 0) *first = l;
    tl.q[n++] = cp;
    i += l;
  }
  for (size_t j = 0; j < 4; j++) tl.qpad[j] = tl.qpad[4 + n + j] = SG__Q_NONE;
  memcpy(tl.qpad + 4, tl.q, n * sizeof *tl.q);
  tl.qsuf[n] = 0;
  for (size_t j = n; j-- > 0;) tl.qsuf[j] = tl.qsuf[j + 1] | sg__cp_bit(tl.q[j]);
  return n;
}

void sg__typo_search(const sg_artifact *a, const locale_view *v, const char *nq, size_t len,
                     unsigned k, sg__top10 *top) {
  if (k > SG_TYPO_MAX_K) k = SG_TYPO_MAX_K;
  size_t first = 0, n = decode_query(nq, len, &first);
  tl.sk_t = SG__SKIP_TABLES;
  /* The cuts the contract allows (docs/DESIGN.md §3.1: edits sort first): with 10
   * items within thr - 1 edits, every item at thr or more sorts after all 10 of them, so
   * the pass at thr cannot change the first 10 and is skipped (thr = 1: ten exact items,
   * sg_artifact_query_k does not even call this). With fewer, the pass must run; inside
   * it only the bound on the 10th item (bounded_out) prunes, once 10 are held. A query
   * that ends with fewer than 10 items must therefore see its whole neighbourhood. */
  for (unsigned thr = 1; n > 0 && thr <= k && top->n < SG_BUCKET_ITEMS; thr++)
    if (!skip_search(a, v, n, nq, first, thr, top)) typo_pass(a, v, n, nq, first, thr, top);
}
