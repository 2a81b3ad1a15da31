/*
 * On-disk layout of the compiled artifact, shared by the writer (compile.c) and the
 * reader (src/search/artifact.c). docs/ARTIFACT.md explains the format and why lookups are
 * exact.
 *
 * Every integer is little-endian and fixed width; every section starts on an 8-byte
 * boundary; offsets are from the first byte of the artifact, so the bytes are position
 * independent and can be mmapped anywhere.
 */
#ifndef SG_COMPILER_FORMAT_H
#define SG_COMPILER_FORMAT_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

#define SG__ART_MAGIC "SGART\0\0\0" /* 8 bytes: "SGART" and three NULs */
#define SG__ART_VERSION 6u
/* The previous released format (0.2.0), which the reader also opens, by its own rules:
 * the same layout without the extension directory, so no feature that needs one of its
 * sections (docs/ARTIFACT.md, "Format versions"). */
#define SG__ART_VERSION_PREV 5u

/* Fixed header (SG__HDR_SIZE bytes), followed by n_locales locale records. */
#define SG__HDR_MAGIC 0       /* 8 bytes */
#define SG__HDR_VERSION 8     /* u32 format version */
#define SG__HDR_HEADER_LEN 12 /* u32 bytes of header + locale records */
#define SG__HDR_TOTAL_LEN 16  /* u64 bytes of the whole artifact */
#define SG__HDR_ITEM_COUNT 24 /* u32 items */
#define SG__HDR_N_LOCALES 28  /* u32 locale records */
#define SG__HDR_DEFAULT 32    /* u32 index of the default locale record */
#define SG__HDR_THRESHOLD 36  /* u32 T: ranges of more keys than this have a bucket */
#define SG__HDR_TAGS_OFF 40   /* u64 section: NUL-terminated locale tags */
#define SG__HDR_TAGS_LEN 48   /* u64 */
#define SG__HDR_FRAGS_OFF 56  /* u64 section: pool of JSON item fragments */
#define SG__HDR_FRAGS_LEN 64  /* u64 */
#define SG__HDR_SIZE_V5 72
/* Format 6 onwards: the extension directory (records of SG__EXT_SIZE bytes). */
#define SG__HDR_EXT_OFF 72 /* u64 section: extension directory */
#define SG__HDR_EXT_N 80   /* u64 records */
#define SG__HDR_SIZE 88
/* The fixed header's size in format version v (the locale records follow it). */
static inline uint32_t sg__hdr_size(uint32_t v) { return v >= 6 ? SG__HDR_SIZE : SG__HDR_SIZE_V5; }

/* Extension record: u32 kind, u32 locale index (SG__EXT_GLOBAL for a section of the
 * whole artifact), u64 offset, u64 length in bytes. Records are sorted by (kind, locale)
 * with no two equal; every section starts 8-byte aligned. A feature that needs data the
 * fixed layout lacks adds a kind here: the reader refuses kinds it does not know, and an
 * artifact without a kind simply lacks the feature. */
#define SG__EXT_SIZE 24
#define SG__EXT_GLOBAL 0xFFFFFFFFu
enum {
  /* Filter by ancestor (docs/DESIGN.md §3.5, docs/ARTIFACT.md "Extension sections").
   * Items are numbered in depth-first preorder of the parent forest (roots, then each
   * item's children, in id order), so an item's descendants are the preorder interval
   * (p, end[p]). SG__EXT_TREE (global): u32 end[p] per preorder p. SG__EXT_WITHIN (per
   * locale): u32 ord2pre[n], u32 pre2ord[n], u32 kstart[n + 1] by preorder, then
   * kstart[n] key references of SG__WREF_SIZE bytes, those of preorder p at
   * [kstart[p], kstart[p + 1]): every key of the item (only items with a parent have
   * any). Both are absent when no item has a parent. */
  SG__EXT_TREE,
  SG__EXT_WITHIN,

  /* Per locale: every item's candidate texts of docs/DESIGN.md §3.3 (displayValue, aliases,
   * synonym aliases), by ordinal: u32 start[item_count + 1] (start[0] = 0, ascending),
   * then u32 text offsets (into the locale's text pool) start[o] .. start[o + 1] of
   * ordinal o. Tier 3 verifies an item against these. */
  SG__EXT_CANDS,
  /* Per locale: the run-together index of tier 4. u64 n_entries, u64 n_buckets, then
   * n_entries records (u32 text offset, u32 ordinal), one per distinct candidate text
   * of an item with its spaces removed, sorted by those bytes (spaces skipped, shorter
   * first) and then ordinal; then n_buckets bucket records (SG__BUCKET_SIZE, tier 0)
   * for every range a prefix selects holding more than T records, sorted by (lo, hi
   * desc), exactly like the keys' buckets. */
  SG__EXT_RUNON,
  /* Per locale: the word index of tier 3. u64 n_words, u64 n_postings, then u32
   * klo[n_words] (the first key of each distinct word's group: the keys equal to the
   * word or starting with it and a space, contiguous in key order; strictly ascending),
   * u32 pstart[n_words + 1] (pstart[0] = 0, ascending, the last = n_postings), then
   * n_postings u32 ordinals: word d's postings pstart[d] .. pstart[d + 1], every item
   * with the word in one of its candidate texts, once, strictly ascending; then u16
   * sig[n_postings], beside each posting its item's word signature: the OR of
   * sg__word_sig (words.h) over the words of the item's candidate texts. */
  SG__EXT_WORDS,

  /* Per locale, the filter by ancestor's index of the large subtrees (docs/ARTIFACT.md,
   * "Extension sections"): u64 m, u64 nk, then m records (u32 preorder p, u32 start,
   * u32 end) sorted by p, then nk key records (SG__KEY_SIZE, the keys' own format):
   * those of [start, end) are every key of p's descendants, in the keys' order (sorted
   * by their bytes); then nk bytes, per key record the bytes it shares with the record
   * before in its run (0 for the first, 255 for 255 or more). Only subtrees holding at least
   * sg__wsub_min_refs keys have one, the largest first while the records number at most those of
   * SG__EXT_WITHIN. Absent when no subtree is that large. */
  SG__EXT_WSUB,
  SG__EXT_KINDS /* the number of kinds this build reads */
};
/* The least number of keys a subtree holds for SG__EXT_WSUB to index it (compile.c;
 * tests lower it to reach the index with small lists). */
extern uint32_t sg__wsub_min_refs;
#define SG__WSUB_MIN_REFS 64u
#define SG__WSUB_REC 12

/* Key reference of SG__EXT_WITHIN: u32 text offset (the key's text, to its NUL), u8 tier,
 * u8[3] the text's first three bytes (NUL padded), which most comparisons need alone. */
#define SG__WREF_SIZE 8

/* One locale record (SG__LOC_SIZE bytes). Counts are records, not bytes. */
#define SG__LOC_TAG_OFF 0      /* u32 offset of the tag in the tags section */
#define SG__LOC_TAG_LEN 4      /* u32 length of the tag (a NUL follows it) */
#define SG__LOC_TEXT_OFF 8     /* u64 section: normalised text pool */
#define SG__LOC_TEXT_LEN 16    /* u64 bytes */
#define SG__LOC_KEYS_OFF 24    /* u64 section: key records sorted by key bytes */
#define SG__LOC_KEYS_N 32      /* u64 */
#define SG__LOC_BUCKETS_OFF 40 /* u64 section: bucket records sorted by (lo, hi desc) */
#define SG__LOC_BUCKETS_N 48   /* u64 */
#define SG__LOC_FRAGIDX_OFF 56 /* u64 section: per item ordinal, its fragment */
#define SG__LOC_FRAGIDX_N 64   /* u64, always item_count */
#define SG__LOC_TRIE_OFF 72    /* u64 section: code-point trie of the sorted keys */
#define SG__LOC_TRIE_N 80      /* u64 nodes */
#define SG__LOC_LCP_OFF 88     /* u64 section: per key, u8 bytes shared with the key before */
#define SG__LOC_BRANCH_OFF                                                                         \
  96 /* u64 section: per key, u8[2] its bytes where it leaves the key before */
#define SG__LOC_SKIP_OFF 104  /* u64 section: skip records of table 0, sorted by (key, lo) */
#define SG__LOC_SKIP_N 112    /* u64 records */
#define SG__LOC_SKIP1_OFF 120 /* u64 section: skip records of table 1 */
#define SG__LOC_SKIP1_N 128   /* u64 records */
#define SG__LOC_SIZE 136

/* Key record: u32 text offset, u32 (tier << 30 | item ordinal). The key's text runs from
 * its offset to the next NUL: the text pool stores every normalised text followed by a
 * NUL (normalised text never contains one), and its last byte is a NUL. */
#define SG__KEY_SIZE 8
#define SG__KEY_TIER_SHIFT 30
#define SG__KEY_ORD_MASK ((1u << SG__KEY_TIER_SHIFT) - 1)
/* Items are numbered by 30-bit ordinals. */
#define SG__MAX_ITEMS SG__KEY_ORD_MASK
/* Bucket record: u32 lo, u32 hi (key range [lo, hi)), u32 n, u32 entries[10], each
 * (tier << 30 | ordinal) like a key: the typo search ranks by tier across buckets. */
#define SG__BUCKET_SIZE (4 * 13)
/* Trie node record: u32 lo, u32 hi (the keys starting with the node's code points),
 * u32 code point (the last of them), u32 first child, u32 child count, u32 best (the
 * least tier << 30 | ordinal of its keys: a bound for the search), u64 signature (bit
 * sg__cp_bit(c) set for every code point c that follows the node's prefix in its keys:
 * a query code point whose bit is clear cannot be matched below it), u64 next (bit
 * sg__cp_bit(c) set for every code point c that directly follows the node's prefix in
 * one of its keys, whether or not a child node exists for it: a search that must
 * continue with c looks no further when the bit is clear). Nodes are in breadth-first
 * order from the root (node 0, the whole key array), so a child's index is always greater
 * than its parent's; only nodes of more than SG__TRIE_MIN keys exist, the smaller
 * subtrees are walked over the keys themselves. */
#define SG__TRIE_SIZE 40
#define SG__TRIE_MIN 8u
/* LCP bytes stored per key are capped here: 255 means "255 or more". The two branch
 * bytes of key j are its bytes at offsets lcp[j] and lcp[j] + 1 (from the first it does
 * not share with key j - 1; the LCP of key 0 is 0): NUL past its end, both NUL where the
 * LCP is capped. With the LCP bytes they name the next byte of every run of keys below
 * a prefix, and of the first key of such a run one byte deeper, without reading text. */
#define SG__BRANCH_SIZE 2
#define SG__LCP_CAP 255u

/* The bit of code point cp in a node's signature and next masks. Normalised text is
 * letters, numbers and single spaces, and in most lists mostly ASCII: the space, the 10
 * digits and the 26 lower-case letters get a bit each (bits 0-36), so for them a mask is
 * exact; every other code point shares the 27 remaining bits by a multiplicative hash. */
/* Skip record (format 6): u8[8] head, u32 run; (format 5: u8[8] head, u32 lo, u32 hi).
 * A skip table with parameters (L, G) has one
 * record per run of keys [lo, hi) that share their first L + G code points t[0 .. L + G),
 * sorted by (sg__skip_key(t[0], t + L, G), lo): the code points a match must have right
 * after the first L when both of its edits fall among those (docs/ARTIFACT.md, "Two
 * edits near the start"). The head holds those L + G code points' UTF-8 when it fits in
 * 8 bytes (NUL padded), which the key is computed from and the search checks the run
 * with, without reading its text; else SG__SKIP_KEYED and the key's 56 bits, little
 * endian, and the search reads the text. Keys of fewer code points have none. Table 0
 * serves queries of at least sg__skip_min_q(0, d) code points, table 1 the shorter ones
 * from sg__skip_min_q(1, d) on. */
#define SG__SKIP_SIZE 12
#define SG__SKIP_SIZE_V5 16
#define SG__SKIP_PFX 8
/* A format-6 record's run: a run of more than SG__TRIE_MIN keys is a trie node (depth
 * L + G code points), SG__SKIP_NODE | its index; a shorter one is its first key lo
 * (below 2^28) and its count - 1 (three bits: 1 .. SG__TRIE_MIN keys) above it. A table
 * whose short runs start past 2^28 keys is written empty (the search's plain walk gives
 * the same answers). */
#define SG__SKIP_NODE 0x80000000u
#define SG__SKIP_LO_BITS 28u
#define SG__SKIP_LO_MASK ((1u << SG__SKIP_LO_BITS) - 1u)
_Static_assert(SG__TRIE_MIN >= 1 && SG__TRIE_MIN <= 8, "a short run's count - 1 takes 3 bits");
#define SG__SKIP_KEYED 0xFFu /* never the first byte of UTF-8 */
#define SG__SKIP_TABLES 2
#define SG__SKIP_MAX_G 3u
#define SG__SKIP_MAX_D 8u /* the most L + G of a table */
static const unsigned sg__skip_l[SG__SKIP_TABLES] = {5, 4};
static const unsigned sg__skip_g[SG__SKIP_TABLES] = {3, 2};
/* Every alignment the table's lookups cover in the typo pass at distance d spells G code
 * points after row L, and none ends before it, once q has L + G + d code points. */
static inline unsigned sg__skip_min_q(unsigned t, unsigned d) {
  return sg__skip_l[t] + sg__skip_g[t] + d;
}

/* 14 bits per code point: exact below U+4000, folded above (equal keys only make
 * candidates; the search checks each run's code points). */
static inline uint64_t sg__skip_cp14(uint32_t cp) {
  return cp < 0x4000u ? cp : (cp ^ cp >> 14 ^ cp >> 28) & 0x3FFFu;
}
static inline uint64_t sg__skip_key(uint32_t first, const uint32_t *g, unsigned G) {
  uint64_t k = sg__skip_cp14(first);
  for (unsigned i = 0; i < SG__SKIP_MAX_G; i++) k = k << 14 | (i < G ? sg__skip_cp14(g[i]) : 0);
  return k;
}

static inline uint64_t sg__cp_bit(uint32_t cp) {
  if (cp == ' ') return 1;
  if (cp - '0' < 10u) return 1ull << (1 + cp - '0');
  if (cp - 'a' < 26u) return 1ull << (11 + cp - 'a');
  return 1ull << (37 + (uint32_t)(((uint64_t)(cp * 0x9E3779B1u) * 27u) >> 32));
}
/* Fragment index record: u32 offset into the fragment pool, u32 length. */
#define SG__FRAGIDX_SIZE 8

#define SG__MAX_LOCALES 256
#define SG__MAX_KEY_LEN ((1u << 30) - 1)

static inline uint16_t sg__rd16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline void sg__wr16(unsigned char *p, uint16_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}
static inline uint32_t sg__rd32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return le32toh(v);
}
static inline uint64_t sg__rd64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return le64toh(v);
}
static inline void sg__wr32(unsigned char *p, uint32_t v) {
  v = htole32(v);
  memcpy(p, &v, 4);
}
static inline void sg__wr64(unsigned char *p, uint64_t v) {
  v = htole64(v);
  memcpy(p, &v, 8);
}

/*
 * A running top-10 of distinct items ordered by (tier, ordinal), both for merging bucket
 * lists in the compiler and for scanning a short key range at query time. Values are
 * (tier << 32 | ordinal), kept ascending, at most one per ordinal. Adding an item that is
 * already present keeps the better value, so the list always holds the best 10 distinct
 * items among everything added so far (an item that fell off the end can only come back
 * with a value better than the current 10th, which is exactly when it belongs).
 */
typedef struct {
  uint64_t v[10];
  uint32_t n;
} sg__top10;

static inline void sg__top10_add(sg__top10 *t, uint64_t v) {
  uint32_t ord = (uint32_t)v;
  for (uint32_t j = 0; j < t->n; j++)
    if ((uint32_t)t->v[j] == ord) {
      if (t->v[j] <= v) return;
      memmove(&t->v[j], &t->v[j + 1], (t->n - j - 1) * sizeof t->v[0]);
      t->n--;
      break;
    }
  if (t->n == 10 && v >= t->v[9]) return;
  uint32_t k = t->n < 10 ? t->n : 9;
  while (k > 0 && t->v[k - 1] > v) {
    t->v[k] = t->v[k - 1];
    k--;
  }
  t->v[k] = v;
  if (t->n < 10) t->n++;
}

#endif
