/*
 * The artifact reader: validates the bytes once at open, then answers lookups without
 * bounds checks and without allocating (layout in format.h, docs/ARTIFACT.md).
 *
 * Open checks every section against the file size and every record that holds an
 * offset or an index (keys, buckets, fragment index) against what it points into. The
 * order of keys and buckets is not checked: a corrupted order can only give wrong
 * answers, since every binary search stays inside its checked array.
 */
#include "compiler/artifact.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "compiler/format.h"
#include "compiler/typo.h"

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
  const unsigned char *lcp;    /* n_keys bytes */
  const unsigned char *branch; /* n_keys * SG__BRANCH_SIZE bytes */
  const unsigned char *skip[SG__SKIP_TABLES]; /* n_skip[t] skip records of table t */
  uint64_t n_skip[SG__SKIP_TABLES];
} locale_view;

struct sg_artifact {
  const unsigned char *data;
  size_t len;
  void *map; /* non-NULL when we own an mmap of len bytes */
  uint32_t n_items;
  uint32_t n_locales;
  uint32_t def;
  uint32_t threshold;
  const char *frags;
  /* Item ids, for sg_artifact_has_item: n_ids (offset, length) pairs into frags sorted
   * by the id's bytes; built at open, so a lookup allocates nothing. */
  uint32_t *ids;
  uint32_t n_ids;
  locale_view loc[];
};

/* True when [off, off + count * size) lies inside a file of len bytes. */
static bool in_file(uint64_t off, uint64_t count, uint64_t size, size_t len) {
  if (off > len) return false;
  if (size && count > (len - off) / size) return false;
  return true;
}

static int check_locale(const unsigned char *d, size_t len, const unsigned char *rec,
                        const char *tags, uint64_t tags_len, uint64_t frags_len, uint32_t n_items,
                        locale_view *v) {
  uint32_t tag_off = sg__rd32(rec + SG__LOC_TAG_OFF), tag_len = sg__rd32(rec + SG__LOC_TAG_LEN);
  if (tag_len == 0 || (uint64_t)tag_off + tag_len >= tags_len) return -1;
  if (tags[tag_off + tag_len] != '\0' || memchr(tags + tag_off, '\0', tag_len)) return -1;
  v->tag = tags + tag_off;
  v->tag_len = tag_len;

  uint64_t text_off = sg__rd64(rec + SG__LOC_TEXT_OFF);
  v->text_len = sg__rd64(rec + SG__LOC_TEXT_LEN);
  uint64_t keys_off = sg__rd64(rec + SG__LOC_KEYS_OFF);
  v->n_keys = sg__rd64(rec + SG__LOC_KEYS_N);
  uint64_t b_off = sg__rd64(rec + SG__LOC_BUCKETS_OFF);
  v->n_buckets = sg__rd64(rec + SG__LOC_BUCKETS_N);
  uint64_t f_off = sg__rd64(rec + SG__LOC_FRAGIDX_OFF);
  uint64_t n_frag = sg__rd64(rec + SG__LOC_FRAGIDX_N);
  if (!in_file(text_off, v->text_len, 1, len) || !in_file(keys_off, v->n_keys, SG__KEY_SIZE, len) ||
      !in_file(b_off, v->n_buckets, SG__BUCKET_SIZE, len) ||
      !in_file(f_off, n_frag, SG__FRAGIDX_SIZE, len) || n_frag != n_items)
    return -1;
  uint64_t t_off = sg__rd64(rec + SG__LOC_TRIE_OFF);
  v->n_trie = sg__rd64(rec + SG__LOC_TRIE_N);
  if (!in_file(t_off, v->n_trie, SG__TRIE_SIZE, len) || v->n_trie >= UINT32_MAX) return -1;
  uint64_t lcp_off = sg__rd64(rec + SG__LOC_LCP_OFF);
  uint64_t br_off = sg__rd64(rec + SG__LOC_BRANCH_OFF);
  if (!in_file(lcp_off, v->n_keys, 1, len) || !in_file(br_off, v->n_keys, SG__BRANCH_SIZE, len))
    return -1;
  if ((keys_off | b_off | f_off | text_off | t_off | lcp_off | br_off) % 8) return -1;
  for (unsigned t = 0; t < SG__SKIP_TABLES; t++) {
    uint64_t off = sg__rd64(rec + (t ? SG__LOC_SKIP1_OFF : SG__LOC_SKIP_OFF));
    v->n_skip[t] = sg__rd64(rec + (t ? SG__LOC_SKIP1_N : SG__LOC_SKIP_N));
    if (!in_file(off, v->n_skip[t], SG__SKIP_SIZE, len) || off % 8) return -1;
    v->skip[t] = d + off;
  }
  v->trie = d + t_off;
  v->lcp = d + lcp_off;
  v->branch = d + br_off;
  if (v->n_keys >= UINT32_MAX) return -1;
  v->text = (const char *)d + text_off;
  v->keys = d + keys_off;
  v->buckets = d + b_off;
  v->fragidx = d + f_off;

  /* Key texts run to the next NUL: a NUL last byte bounds every key read. */
  if (v->n_keys && (v->text_len == 0 || v->text[v->text_len - 1] != '\0')) return -1;
  for (uint64_t i = 0; i < v->n_keys; i++) {
    const unsigned char *k = v->keys + i * SG__KEY_SIZE;
    uint32_t off = sg__rd32(k), w = sg__rd32(k + 4);
    if (off >= v->text_len || (w >> SG__KEY_TIER_SHIFT) > 2 || (w & SG__KEY_ORD_MASK) >= n_items)
      return -1;
  }
  for (uint64_t i = 0; i < v->n_buckets; i++) {
    const unsigned char *b = v->buckets + i * SG__BUCKET_SIZE;
    uint32_t lo = sg__rd32(b), hi = sg__rd32(b + 4), n = sg__rd32(b + 8);
    if (lo >= hi || hi > v->n_keys || n > SG_BUCKET_ITEMS) return -1;
    for (uint32_t j = 0; j < n; j++) {
      uint32_t w = sg__rd32(b + 12 + 4 * j);
      if ((w & SG__KEY_ORD_MASK) >= n_items || (w >> SG__KEY_TIER_SHIFT) > 2) return -1;
    }
  }
  /* Trie nodes: key ranges inside the keys, children after their parent (so a walk
   * always ends) and inside the node array. */
  for (uint64_t i = 0; i < v->n_trie; i++) {
    const unsigned char *t = v->trie + i * SG__TRIE_SIZE;
    uint32_t lo = sg__rd32(t), hi = sg__rd32(t + 4), first = sg__rd32(t + 12), n = sg__rd32(t + 16);
    if (lo > hi || hi > v->n_keys) return -1;
    if (n && (first <= i || (uint64_t)first + n > v->n_trie)) return -1;
  }
  for (unsigned t = 0; t < SG__SKIP_TABLES; t++)
    for (uint64_t i = 0; i < v->n_skip[t]; i++) {
      const unsigned char *r = v->skip[t] + i * SG__SKIP_SIZE;
      uint32_t lo = sg__rd32(r + 8), hi = sg__rd32(r + 12);
      if (lo >= hi || hi > v->n_keys) return -1;
    }
  for (uint64_t i = 0; i < n_frag; i++) {
    const unsigned char *f = v->fragidx + i * SG__FRAGIDX_SIZE;
    uint32_t off = sg__rd32(f), flen = sg__rd32(f + 4);
    if (flen == 0 || (uint64_t)off + flen > frags_len) return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------- item ids ------- */

/* Every fragment starts {"itemId":"<id>", (compile.c, write_fragment); ids are the
 * store's [A-Za-z0-9_-], so the id's bytes in the fragment are the id itself. */
#define ID_PREFIX "{\"itemId\":\""
#define ID_PREFIX_LEN (sizeof ID_PREFIX - 1)

/* The id of item ordinal ord in the first locale's fragments: 0 and (*off, *len) into
 * frags, or -1 when the fragment does not start with one. */
static int fragment_id(const sg_artifact *a, uint32_t ord, uint32_t *off, uint32_t *len) {
  const unsigned char *f = a->loc[0].fragidx + (size_t)ord * SG__FRAGIDX_SIZE;
  uint32_t fo = sg__rd32(f), fl = sg__rd32(f + 4); /* inside frags (check_locale) */
  if (fl <= ID_PREFIX_LEN || memcmp(a->frags + fo, ID_PREFIX, ID_PREFIX_LEN) != 0) return -1;
  const char *id = a->frags + fo + ID_PREFIX_LEN;
  const char *q = memchr(id, '"', fl - ID_PREFIX_LEN);
  if (!q || q == id) return -1;
  *off = fo + (uint32_t)ID_PREFIX_LEN;
  *len = (uint32_t)(q - id);
  return 0;
}

static int id_cmp(const void *x, const void *y, void *ctx) {
  const char *frags = ctx;
  const uint32_t *a = x, *b = y;
  uint32_t n = a[1] < b[1] ? a[1] : b[1];
  int c = memcmp(frags + a[0], frags + b[0], n);
  return c ? c : (a[1] > b[1]) - (a[1] < b[1]);
}

/* Sorts the items' ids for sg_artifact_has_item. An artifact whose fragments carry no
 * id (none the compiler writes) simply answers false for every id. */
static int build_id_index(sg_artifact *a) {
  a->ids = NULL;
  a->n_ids = 0;
  if (a->n_items == 0) return 0;
  if (!(a->ids = malloc((size_t)a->n_items * 2 * sizeof *a->ids))) return -1;
  for (uint32_t i = 0; i < a->n_items; i++)
    if (fragment_id(a, i, &a->ids[2 * a->n_ids], &a->ids[2 * a->n_ids + 1]) == 0) a->n_ids++;
  qsort_r(a->ids, a->n_ids, 2 * sizeof *a->ids, id_cmp, (void *)a->frags);
  return 0;
}

bool sg_artifact_has_item(const sg_artifact *a, const char *id, size_t len) {
  if (!a || !id || len == 0 || len > UINT32_MAX) return false;
  size_t lo = 0, hi = a->n_ids;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const uint32_t *e = &a->ids[2 * mid];
    size_t n = e[1] < len ? e[1] : len;
    int c = memcmp(a->frags + e[0], id, n);
    if (c == 0) c = (e[1] > len) - (e[1] < len);
    if (c == 0) return true;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return false;
}

int sg_artifact_open_mem(const void *data, size_t len, sg_artifact **out) {
  const unsigned char *d = data;
  *out = NULL;
  if (!d || len < SG__HDR_SIZE || memcmp(d, SG__ART_MAGIC, 8) != 0) return -1;
  if (sg__rd32(d + SG__HDR_VERSION) != SG__ART_VERSION) return -1;
  if (sg__rd64(d + SG__HDR_TOTAL_LEN) != len) return -1;
  uint32_t n_loc = sg__rd32(d + SG__HDR_N_LOCALES), def = sg__rd32(d + SG__HDR_DEFAULT);
  uint32_t hdr_len = sg__rd32(d + SG__HDR_HEADER_LEN);
  if (n_loc == 0 || n_loc > SG__MAX_LOCALES || def >= n_loc) return -1;
  if (hdr_len != SG__HDR_SIZE + (uint64_t)n_loc * SG__LOC_SIZE || hdr_len > len) return -1;
  uint64_t tags_off = sg__rd64(d + SG__HDR_TAGS_OFF), tags_len = sg__rd64(d + SG__HDR_TAGS_LEN);
  uint64_t frags_off = sg__rd64(d + SG__HDR_FRAGS_OFF), frags_len = sg__rd64(d + SG__HDR_FRAGS_LEN);
  if (!in_file(tags_off, tags_len, 1, len) || !in_file(frags_off, frags_len, 1, len)) return -1;

  sg_artifact *a = calloc(1, sizeof *a + n_loc * sizeof(locale_view));
  if (!a) return -1;
  a->data = d;
  a->len = len;
  a->n_items = sg__rd32(d + SG__HDR_ITEM_COUNT);
  a->n_locales = n_loc;
  a->def = def;
  a->threshold = sg__rd32(d + SG__HDR_THRESHOLD);
  a->frags = (const char *)d + frags_off;
  for (uint32_t l = 0; l < n_loc; l++)
    if (check_locale(d, len, d + SG__HDR_SIZE + (size_t)l * SG__LOC_SIZE,
                     (const char *)d + tags_off, tags_len, frags_len, a->n_items, &a->loc[l])) {
      free(a);
      return -1;
    }
  if (build_id_index(a)) {
    free(a);
    return -1;
  }
  *out = a;
  return 0;
}

int sg_artifact_open_file(const char *path, sg_artifact **out) {
  *out = NULL;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size <= 0) {
    close(fd);
    return -1;
  }
  size_t len = (size_t)st.st_size;
  void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return -1;
  if (sg_artifact_open_mem(m, len, out) != 0) {
    munmap(m, len);
    return -1;
  }
  (*out)->map = m;
  return 0;
}

int sg_artifact_load_file(const char *path, const char *content_hash, sg_artifact **out) {
  *out = NULL;
  const char *want = content_hash;
  if (strncmp(want, "sha256:", 7) == 0) want += 7;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < SG__HDR_SIZE) {
    close(fd);
    errno = EINVAL;
    return -1;
  }
  size_t len = (size_t)st.st_size;
  /* Private anonymous memory: nobody else can shrink it under a reader (a shared mapping
   * of a file that is truncated in place raises SIGBUS on the next access). */
  unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) {
    close(fd);
    return -1;
  }
  /* Huge pages where the kernel offers them on request (transparent_hugepage=madvise):
   * the typo search reads tens of thousands of scattered keys of a large list, and with
   * 4 KiB pages most of those reads also miss the TLB. Advice only: no error matters. */
  (void)madvise(m, len, MADV_HUGEPAGE);
  size_t got = 0;
  while (got < len) {
    ssize_t n = read(fd, m + got, len - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break; /* an error, or the file shrank since fstat */
    got += (size_t)n;
  }
  close(fd);
  uint8_t d[32];
  char hex[65] = "";
  if (got == len) {
    crypto_hash_sha256(d, m, len);
    sg_hex(d, sizeof d, hex);
  }
  if (got != len || strcmp(hex, want) != 0) {
    munmap(m, len);
    errno = EBADMSG;
    return -1;
  }
  mprotect(m, len, PROT_READ);
  if (sg_artifact_open_mem(m, len, out) != 0) {
    munmap(m, len);
    errno = EINVAL;
    return -1;
  }
  (*out)->map = m;
  return 0;
}

void sg_artifact_close(sg_artifact *a) {
  if (!a) return;
  if (a->map) munmap(a->map, a->len);
  free(a->ids);
  free(a);
}

size_t sg_artifact_item_count(const sg_artifact *a) { return a->n_items; }

const char *sg_artifact_default_locale(const sg_artifact *a) { return a->loc[a->def].tag; }

size_t sg_artifact_locale_count(const sg_artifact *a) { return a->n_locales; }

const char *sg_artifact_locale_tag(const sg_artifact *a, int loc) {
  if (loc < 0 || (uint32_t)loc >= a->n_locales) return NULL;
  return a->loc[loc].tag;
}

int sg_artifact_locale_stats(const sg_artifact *a, int loc, size_t *keys, size_t *buckets,
                             size_t *threshold) {
  if (loc < 0 || (uint32_t)loc >= a->n_locales) return -1;
  *keys = (size_t)a->loc[loc].n_keys;
  *buckets = (size_t)a->loc[loc].n_buckets;
  *threshold = a->threshold;
  return 0;
}

int sg_artifact_resolve_locale(const sg_artifact *a, const char *requested, const char **tag) {
  int found = (int)a->def;
  if (requested && *requested) {
    int exact = -1, lang = -1;
    size_t sub = strcspn(requested, "-_");
    for (uint32_t l = 0; l < a->n_locales; l++) {
      if (exact < 0 && strcasecmp(a->loc[l].tag, requested) == 0) exact = (int)l;
      if (lang < 0 && a->loc[l].tag_len == sub && strncasecmp(a->loc[l].tag, requested, sub) == 0)
        lang = (int)l;
    }
    if (exact >= 0)
      found = exact;
    else if (lang >= 0)
      found = lang;
  }
  if (tag) *tag = a->loc[found].tag;
  return found;
}

/* ---- lookup ------------------------------------------------------------------------- */

/* Compares the key's first min(len, qlen) bytes with q, a key shorter than q and equal
 * to its start comparing below; a key that q is a prefix of compares equal, which is
 * what both range ends need. q holds no NUL, so strncmp stops exactly at the key's
 * terminating NUL (inside the text section, checked at open). */
static inline int cmp_key_prefix(const locale_view *v, uint64_t i, const char *q, size_t qlen) {
  const char *k = v->text + sg__rd32(v->keys + i * SG__KEY_SIZE);
  /* Most probes of a binary search differ in the first byte: decide those inline. */
  if (*k != *q) return (unsigned char)*k < (unsigned char)*q ? -1 : 1;
  return strncmp(k, q, qlen);
}

/* The keys having nq[0..len) as a prefix, [*plo, *phi) (empty when none): one search
 * narrows [lo, hi) until a key that starts with nq is met; then lo is the first such key
 * at or before it, and hi the first key after it that does not start with nq. Probes that
 * land outside the range on either side shrink both searches. */
static void prefix_range(const locale_view *v, const char *nq, size_t len, uint64_t *plo,
                         uint64_t *phi) {
  uint64_t lo = 0, hi = v->n_keys;
  for (; len;) { /* an empty nq is a prefix of every key: the whole range */
    if (lo >= hi) break;
    uint64_t mid = lo + (hi - lo) / 2;
    int c = cmp_key_prefix(v, mid, nq, len);
    if (c < 0) {
      lo = mid + 1;
    } else if (c > 0) {
      hi = mid;
    } else {
      uint64_t b = mid; /* lower bound in [lo, mid] */
      while (lo < b) {
        uint64_t m = lo + (b - lo) / 2;
        if (cmp_key_prefix(v, m, nq, len) < 0)
          lo = m + 1;
        else
          b = m;
      }
      uint64_t e = mid + 1; /* upper bound in [mid + 1, hi] */
      while (e < hi) {
        uint64_t m = e + (hi - e) / 2;
        if (cmp_key_prefix(v, m, nq, len) <= 0)
          e = m + 1;
        else
          hi = m;
      }
      break;
    }
  }
  *plo = lo;
  *phi = lo < hi ? hi : lo;
}

/* Adds the best 10 distinct items of the key range [lo, hi) (a range some prefix selects)
 * to top, each valued base | tier << 32 | ordinal. */
static void range_top(const sg_artifact *a, const locale_view *v, uint64_t lo, uint64_t hi,
                      uint64_t base, sg__top10 *top) {
  const unsigned char *bucket = NULL;
  if (hi - lo > a->threshold) {
    /* Buckets are sorted by (lo asc, hi desc); find exactly [lo, hi). */
    uint64_t b = 0, e = v->n_buckets;
    while (b < e) {
      uint64_t mid = b + (e - b) / 2;
      const unsigned char *r = v->buckets + mid * SG__BUCKET_SIZE;
      uint32_t rlo = sg__rd32(r), rhi = sg__rd32(r + 4);
      if (rlo < lo || (rlo == lo && rhi > hi))
        b = mid + 1;
      else
        e = mid;
    }
    if (b < v->n_buckets) {
      const unsigned char *r = v->buckets + b * SG__BUCKET_SIZE;
      if (sg__rd32(r) == lo && sg__rd32(r + 4) == hi) bucket = r;
    }
  }
  if (bucket) {
    uint32_t n = sg__rd32(bucket + 8);
    if (top->n == 0) { /* the common case: already the answer, in order */
      for (uint32_t j = 0; j < n; j++) {
        uint32_t w = sg__rd32(bucket + 12 + 4 * j);
        top->v[j] = base | (uint64_t)(w >> SG__KEY_TIER_SHIFT) << 32 | (w & SG__KEY_ORD_MASK);
      }
      top->n = n;
      return;
    }
    for (uint32_t j = 0; j < n; j++) {
      uint32_t w = sg__rd32(bucket + 12 + 4 * j);
      sg__top10_add(top, base | (uint64_t)(w >> SG__KEY_TIER_SHIFT) << 32 | (w & SG__KEY_ORD_MASK));
    }
    return;
  }
  /* At most T keys by construction (a larger range always has a bucket); on a corrupted
   * file this is still correct, just slower. */
  for (uint64_t i = lo; i < hi; i++) {
    uint32_t w = sg__rd32(v->keys + i * SG__KEY_SIZE + 4);
    sg__top10_add(top, base | (uint64_t)(w >> SG__KEY_TIER_SHIFT) << 32 | (w & SG__KEY_ORD_MASK));
  }
}

/* ---- typo search (DESIGN.md section 3.1, docs/ARTIFACT.md) ---------------------------- */

/* Values in a top list: edits << EDITS_SHIFT | tier << 32 | ordinal. */
#define EDITS_SHIFT 40

/* Per-thread scratch of the search: the query's code points and, per depth of the
 * current key, its DP row, its code point and the byte offset where the next one starts. */
#define MAX_DEPTH (SG_TYPO_MAX_Q + SG_TYPO_MAX_K + 2)
static _Thread_local struct {
  uint32_t q[SG_TYPO_MAX_Q];
  sg__osa_row row[MAX_DEPTH];
  uint32_t cp[MAX_DEPTH];
  uint32_t bo[MAX_DEPTH];
  /* The trie walk's stack: per depth, the node, its next child, and the first key not
   * yet walked. */
  uint32_t st_node[MAX_DEPTH], st_next[MAX_DEPTH], st_pos[MAX_DEPTH];
  /* The zero-slack walk's stack (zs_walk): per depth, its key range, its trie node
   * (NO_NODE when not materialised), the code points not yet tried below it and the
   * text of its first key. */
  uint32_t zs_lo[MAX_DEPTH], zs_hi[MAX_DEPTH], zs_node[MAX_DEPTH];
  uint8_t zs_left[MAX_DEPTH];      /* the candidates not yet tried (zs_candidates) */
  const char *zs_first[MAX_DEPTH]; /* the text of key zs_lo, once read (else NULL) */
  /* Rows of depth below this are capped (cap_row): the restricted walk of skip_search. */
  size_t cap_rows;
  /* qsuf[j]: the sg__cp_bit of every code point of q[j..n) (for reachable). */
  uint64_t qsuf[SG_TYPO_MAX_Q + 1];
} tl;

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

static inline uint32_t trie_rd(const locale_view *v, uint32_t node, int field) {
  return sg__rd32(v->trie + (uint64_t)node * SG__TRIE_SIZE + 4 * (unsigned)field);
}
enum { T_LO, T_HI, T_CP, T_FIRST, T_N, T_BEST, T_SIG_LO, T_SIG_HI, T_NEXT_LO, T_NEXT_HI };

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
  if (!(tl.qsuf[jlo] & ~sig)) return sg__osa_min(r, i, n) <= thr;
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

/* ---- the zero-slack walk ----
 *
 * A row whose least cell is exactly thr (and whose distance D[i][n] is over it) has no
 * slack left: no cell of a deeper row is below thr, and a child's row can only keep a
 * cell at thr through a match, never through an insertion, deletion or substitution.
 * Its cell (i, j) at thr continues only with the code point q[j] (the diagonal), and a
 * cell (i - 1, j) below thr only with q[j] when t_i = q[j + 1] (the swap). So instead of
 * stepping every child or key below such a node, the walk looks up the at most
 * 2 * SG__BAND code points that can keep it alive, by binary search over the node's
 * children or its keys. On package names nearly all the rows the plain walk computed
 * (~90%) were in this state. */

#define NO_NODE UINT32_MAX
#define NO_CP UINT32_MAX

/* Branch and bound: with 10 items found, a node whose best key could not enter the list
 * at distance thr holds nothing for it. */
static inline bool bounded_out(const locale_view *v, uint32_t node, unsigned thr,
                               const sg__top10 *top) {
  if (top->n < SG_BUCKET_ITEMS) return false;
  uint32_t w = trie_rd(v, node, T_BEST);
  uint64_t bound = (uint64_t)thr << EDITS_SHIFT | (uint64_t)(w >> SG__KEY_TIER_SHIFT) << 32 |
                   (w & SG__KEY_ORD_MASK);
  return bound >= top->v[SG_BUCKET_ITEMS - 1];
}

/* In the restricted walk of skip_search, a row of depth below tl.cap_rows keeps only its
 * cells of at most SG_TYPO_MAX_K - 1: the walk then follows exactly the alignments that
 * spend at most one edit on the key's first L code points (skip_search).
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
    for (size_t b = 0; b < SG__BAND; b++)
      if (tl.row[d].c[b] > SG_TYPO_MAX_K - 1) tl.row[d].c[b] = SG__CAP;
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
  sg__osa_step(&tl.row[d], &tl.row[d - 1], d >= 2 ? &tl.row[d - 2] : NULL, d, cp,
               d >= 2 ? tl.cp[d - 1] : 0, tl.q, n);
  cap_row(d, n);
  return sg__osa_last(&tl.row[d], d, n);
}

/* The code points that can keep a child of the zero-slack row c within thr, as a mask:
 * bit b stands for q[c - 3 + b] (the diagonal reaches q[c - 2 .. c + 2], the swap
 * q[c - 3 .. c + 1]). */
static unsigned zs_candidates(size_t c, size_t n, unsigned thr) {
  const uint32_t *q = tl.q;
  const uint8_t *r = tl.row[c].c;
  unsigned mask = 0;
  /* Diagonal: cell b is column j = c - K + b, for j in [0, n - 1]. */
  size_t b0 = c < SG_TYPO_MAX_K ? SG_TYPO_MAX_K - c : 0;
  size_t b1 = n + SG_TYPO_MAX_K > c ? n + SG_TYPO_MAX_K - c : 0; /* one past the last */
  if (b1 > SG__BAND) b1 = SG__BAND;
  for (size_t b = b0; b < b1; b++)
    if (r[b] == thr) mask |= 2u << b;
  if (c >= 1) {
    /* Swap: cell b of row c - 1 is column j = c - 1 - K + b, for j in [0, n - 2]. */
    const uint8_t *r1 = tl.row[c - 1].c;
    uint32_t t = tl.cp[c];
    b0 = c < SG_TYPO_MAX_K + 1 ? SG_TYPO_MAX_K + 1 - c : 0;
    b1 = n + SG_TYPO_MAX_K > c ? n + SG_TYPO_MAX_K - c : 0;
    if (b1 > SG__BAND) b1 = SG__BAND;
    for (size_t b = b0; b < b1; b++)
      if (r1[b] + 1u <= thr && t == q[c - 1 - SG_TYPO_MAX_K + b + 1]) mask |= 1u << b;
  }
  return mask;
}

/* Drops from the candidate mask of level c the code points that no key of node x has
 * next (its next mask): a lookup for them could only come back empty. */
static unsigned zs_filter(const locale_view *v, uint32_t x, size_t c, unsigned mask) {
  if (x == NO_NODE) return mask;
  uint64_t next = trie_rd(v, x, T_NEXT_LO) | (uint64_t)trie_rd(v, x, T_NEXT_HI) << 32;
  for (unsigned r = mask; r; r &= r - 1) {
    unsigned b = (unsigned)__builtin_ctz(r);
    if (!(next & sg__cp_bit(tl.q[c - 3 + b]))) mask &= ~(1u << b);
  }
  return mask;
}

/* Takes the next candidate code point of level c off *mask (with every other bit that
 * names the same code point), or returns NO_CP. */
static uint32_t zs_take(size_t c, uint8_t *mask) {
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
static void byte_subrange(const locale_view *v, uint64_t lo, uint64_t hi, size_t off,
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
static void next_subrange(const locale_view *v, uint64_t lo, uint64_t hi, size_t off,
                          const unsigned char *enc, size_t elen, const char **first, uint64_t *sl,
                          uint64_t *sh) {
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
  uint32_t nch = trie_rd(v, x, T_N), first = trie_rd(v, x, T_FIRST);
  uint32_t b = 0, e = nch;
  while (b < e) {
    uint32_t m = b + (e - b) / 2;
    if (trie_rd(v, first + m, T_CP) < cp)
      b = m + 1;
    else
      e = m;
  }
  if (b < nch && trie_rd(v, first + b, T_CP) == cp) {
    *sl = trie_rd(v, first + b, T_LO);
    *sh = trie_rd(v, first + b, T_HI);
    return first + b;
  }
  *sl = b > 0 ? trie_rd(v, first + b - 1, T_HI) : trie_rd(v, x, T_LO);
  *sh = b < nch ? trie_rd(v, first + b, T_LO) : trie_rd(v, x, T_HI);
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
      if (last == thr) range_top(a, v, sl, sh, (uint64_t)thr << EDITS_SHIFT, top);
      continue;
    }
    if (sg__osa_min(&tl.row[e], e, n) > thr) continue;
    if (ch != NO_NODE) {
      uint64_t sig = trie_rd(v, ch, T_SIG_LO) | (uint64_t)trie_rd(v, ch, T_SIG_HI) << 32;
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
static inline bool no_slack(size_t c, size_t n, unsigned thr) {
  return sg__osa_min(&tl.row[c], c, n) == thr;
}

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
  const uint32_t *q = tl.q;
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
      sg__osa_step(&tl.row[d], &tl.row[c], d >= 2 ? &tl.row[d - 2] : NULL, d, cp,
                   d >= 2 ? tl.cp[d - 1] : 0, q, n);
      cap_row(d, n);
      c = d;
      unsigned last = sg__osa_last(&tl.row[c], c, n);
      unsigned least = sg__osa_min(&tl.row[c], c, n);
      if (last <= thr || least >= thr) {
        uint64_t e = run_end_lcp(v, i, r, s, tl.bo[c]);
        if (last == thr)
          range_top(a, v, i, e, (uint64_t)thr << EDITS_SHIFT, top);
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

/* One pass with distance thr over the subtree of trie node root at depth c0 (rows
 * 0..c0 set), depth first over the materialised trie nodes (the runs of more than
 * SG__TRIE_MIN keys, whose code points are in the node records: no key text is read),
 * and over the keys between them with scan_keys. Same stopping rules as scan_keys. */
static void trie_pass(const sg_artifact *a, const locale_view *v, size_t n, uint32_t root,
                      size_t c0, unsigned thr, sg__top10 *top) {
  if (no_slack(c0, n, thr)) {
    zs_walk(a, v, n, trie_rd(v, root, T_LO), trie_rd(v, root, T_HI), root, NULL, c0, thr, top);
    return;
  }
  size_t sp = 0;
  tl.st_node[0] = root;
  tl.st_next[0] = 0;
  tl.st_pos[0] = trie_rd(v, root, T_LO);
  while (true) {
    uint32_t x = tl.st_node[sp];
    size_t c = c0 + sp; /* the rows of x's prefix end at depth c */
    uint32_t nch = trie_rd(v, x, T_N), first = trie_rd(v, x, T_FIRST);
    uint32_t hi = trie_rd(v, x, T_HI);
    if (tl.st_next[sp] == nch) { /* the keys after the last child, then up */
      if (tl.st_pos[sp] < hi) scan_keys(a, v, n, tl.st_pos[sp], hi, c, thr, top);
      if (sp == 0) return;
      sp--;
      continue;
    }
    uint32_t ch = first + tl.st_next[sp]++;
    uint32_t lo = trie_rd(v, ch, T_LO), chi = trie_rd(v, ch, T_HI);
    if (tl.st_pos[sp] < lo) scan_keys(a, v, n, tl.st_pos[sp], lo, c, thr, top);
    if (chi > tl.st_pos[sp]) tl.st_pos[sp] = chi;
    if (bounded_out(v, ch, thr, top)) continue;
    uint32_t cp = trie_rd(v, ch, T_CP);
    size_t d = c + 1;
    if (d >= MAX_DEPTH) continue; /* unreachable: rows past n + 2 exceed every budget */
    unsigned last = step_row(d, cp, n);
    if (last <= thr) {
      if (last == thr) range_top(a, v, lo, chi, (uint64_t)thr << EDITS_SHIFT, top);
      continue;
    }
    uint64_t sig = trie_rd(v, ch, T_SIG_LO) | (uint64_t)trie_rd(v, ch, T_SIG_HI) << 32;
    if (!reachable(&tl.row[d], d, n, sig, thr)) continue;
    if (no_slack(d, n, thr)) {
      zs_walk(a, v, n, lo, chi, ch, NULL, d, thr, top);
      continue;
    }
    sp++;
    tl.st_node[sp] = ch;
    tl.st_next[sp] = 0;
    tl.st_pos[sp] = lo;
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
  uint32_t nch = trie_rd(v, 0, T_N), first_child = trie_rd(v, 0, T_FIRST);
  uint32_t b = 0, e = nch;
  while (b < e) {
    uint32_t m = b + (e - b) / 2;
    if (trie_rd(v, first_child + m, T_CP) < tl.q[0])
      b = m + 1;
    else
      e = m;
  }
  bool node = b < nch && trie_rd(v, first_child + b, T_CP) == tl.q[0];
  uint64_t l, r;
  if (node) {
    l = trie_rd(v, first_child + b, T_LO);
    r = trie_rd(v, first_child + b, T_HI);
  } else {
    prefix_range(v, nq, first, &l, &r);
  }
  if (l >= r) return;
  if (last0 <= thr) { /* a query of at most thr code points: every key is in */
    if (last0 == thr) range_top(a, v, l, r, (uint64_t)thr << EDITS_SHIFT, top);
    return;
  }
  if (!node) {
    scan_keys(a, v, n, l, r, 0, thr, top);
    return;
  }
  /* Row 1 for the first code point, then the node's subtree. */
  tl.cp[1] = tl.q[0];
  tl.bo[1] = (uint32_t)first;
  sg__osa_step(&tl.row[1], &tl.row[0], NULL, 1, tl.q[0], 0, tl.q, n);
  cap_row(1, n);
  unsigned last1 = sg__osa_last(&tl.row[1], 1, n);
  if (last1 <= thr) {
    if (last1 == thr) range_top(a, v, l, r, (uint64_t)thr << EDITS_SHIFT, top);
    return;
  }
  trie_pass(a, v, n, first_child + b, 1, thr, top);
}

/* ---- two edits near the start (docs/ARTIFACT.md) ----
 *
 * On a large list most of the two-edit pass is spent near the root: every prefix of two
 * to six code points within two edits of q's start exists, and each must be looked up
 * to learn that q's rest does not follow it. skip_search splits that pass by the cost
 * an alignment has reached at row L (after the key's first L code points), for the skip
 * table (L, G) that q is long enough for:
 * - at most 1: the usual walk with the rows of depth <= L capped (cap_row), which only
 *   visits the one-edit neighbourhood of q's start;
 * - exactly 2 (the budget): no edit is left, so from its cell (L, j) on the key spells
 *   q[j..n) exactly: its code points L .. L + G are q[j .. j + G) for some j in
 *   [L - 2, L + 2];
 * - an alignment can also skip row L by swapping the key's code points L and L + 1 (rows
 *   L and L + 1) from a cell (L - 1, j - 2). From a cell of 0 the capped walk follows
 *   it (the cell (L, j - 1) is then at most 1); from a cell of 1 it ends at (L + 1, j)
 *   at cost 2 and spells q[j..n) from there: its code points L .. L + G are q[j - 2],
 *   q[j] ... q[j + G - 2] for some j in [L - 1, L + 3].
 * The skip records list, by those G code points (and the first), the runs of keys that
 * share their first L + G code points. Each run found is checked from its prefix, with
 * the cells of row L - 1 raised to at least 1 and those of row L to at least 2 (the
 * alignments through lower cells are the capped walk's), and then searched like any row
 * without slack. A query needs n >= L + G + 2 code points (sg__skip_min_q) so that each
 * of these alignments spells G code points after row L and none ends before row L + G;
 * shorter queries take the usual walk. */

/* The runs of the skip records under key, checked and searched as above. */
/* The key of skip record r of table t: stored, or computed from its head's code points
 * (format.h). */
static uint64_t skip_rec_key(const unsigned char *r, unsigned t) {
  if (r[0] == SG__SKIP_KEYED) {
    uint64_t k = 0;
    for (unsigned x = 7; x > 0; x--) k = k << 8 | r[x];
    return k;
  }
  const unsigned L = sg__skip_l[t], G = sg__skip_g[t];
  uint32_t cps[SG__SKIP_MAX_D] = {0};
  uint64_t w;
  memcpy(&w, r, 8);
  if (!(w & 0x8080808080808080ull)) { /* ASCII: a byte is a code point */
    for (unsigned x = 0; x < L + G; x++) cps[x] = r[x];
  } else {
    char head[SG__SKIP_PFX + 1] = {0};
    memcpy(head, r, SG__SKIP_PFX);
    size_t o = 0;
    for (unsigned x = 0; x < L + G; x++) o += sg__utf8_next(head + o, &cps[x]);
  }
  return sg__skip_key(cps[0], cps + L, G);
}

static void skip_runs(const sg_artifact *a, const locale_view *v, size_t n, unsigned t,
                      uint64_t key, sg__top10 *top) {
  const unsigned thr = SG_TYPO_MAX_K;
  const size_t L = sg__skip_l[t], D = sg__skip_l[t] + sg__skip_g[t];
  const unsigned char *recs = v->skip[t];
  uint64_t b = 0, e = v->n_skip[t];
  while (b < e) {
    uint64_t m = b + (e - b) / 2;
    if (skip_rec_key(recs + m * SG__SKIP_SIZE, t) < key)
      b = m + 1;
    else
      e = m;
  }
  /* The records under one key are in key order, so consecutive ones often share their
   * first code points: their rows are reused, and a record that shares the code points
   * whose row ended the one before ends there too. */
  char prev[SG__SKIP_PFX + 1] = {0}; /* the previous record's prefix, when inline */
  size_t valid = 0, dead = 0; /* its rows 0..valid are set; the row that ended it (or 0) */
  sg__osa_row0(&tl.row[0], n);
  tl.bo[0] = 0;
  for (; b < v->n_skip[t] && skip_rec_key(recs + b * SG__SKIP_SIZE, t) == key; b++) {
    const unsigned char *r = recs + b * SG__SKIP_SIZE;
    uint32_t lo = sg__rd32(r + 8), hi = sg__rd32(r + 12);
    /* The run's first code points from the record when they fit, else from the text. */
    char pfx[SG__SKIP_PFX + 1] = {0};
    if (r[0] != SG__SKIP_KEYED) memcpy(pfx, r, SG__SKIP_PFX);
    const char *text = NULL, *s = pfx[0] ? pfx : (text = key_text(v, lo));
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
      if (sg__osa_min(&tl.row[d], d, n) > thr) break;
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
    if (sg__osa_last(&tl.row[D], D, n) <= thr)
      range_top(a, v, lo, hi, (uint64_t)thr << EDITS_SHIFT, top);
    else
      zs_walk(a, v, n, lo, hi, NO_NODE, text, D, thr, top);
  }
}

/* The pass at distance SG_TYPO_MAX_K through a skip table, when q is long enough for
 * one: table 0 from its length on, table 1 below it. */
static bool skip_search(const sg_artifact *a, const locale_view *v, size_t n, const char *nq,
                        size_t first, sg__top10 *top) {
  unsigned t = n >= sg__skip_min_q(0) ? 0 : 1;
  if (n < sg__skip_min_q(t)) return false;
  const size_t L = sg__skip_l[t], G = sg__skip_g[t];
  tl.cap_rows = L + 1;
  typo_pass(a, v, n, nq, first, SG_TYPO_MAX_K, top);
  tl.cap_rows = 0;
  for (size_t j = L - SG_TYPO_MAX_K; j <= L + SG_TYPO_MAX_K; j++) /* through row L */
    skip_runs(a, v, n, t, sg__skip_key(tl.q[0], tl.q + j, (unsigned)G), top);
  for (size_t j = L - 1; j <= L + 3; j++) { /* swapping the key's code points L and L + 1 */
    uint32_t g[SG__SKIP_MAX_G] = {tl.q[j - 2], tl.q[j], G > 2 ? tl.q[j + 1] : 0};
    skip_runs(a, v, n, t, sg__skip_key(tl.q[0], g, (unsigned)G), top);
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
  tl.qsuf[n] = 0;
  for (size_t j = n; j-- > 0;) tl.qsuf[j] = tl.qsuf[j + 1] | sg__cp_bit(tl.q[j]);
  return n;
}

void sg_artifact_query_k(const sg_artifact *a, int loc, const char *nq, size_t len, unsigned k,
                         sg_query_result *res) {
  res->n = 0;
  if (loc < 0 || (uint32_t)loc >= a->n_locales) loc = (int)a->def;
  const locale_view *v = &a->loc[loc];
  /* No key contains a NUL, so a query with one matches nothing. */
  if (memchr(nq, '\0', len)) return;
  sg__top10 top = {{0}, 0};
  uint64_t lo, hi;
  prefix_range(v, nq, len, &lo, &hi);
  if (lo < hi) range_top(a, v, lo, hi, 0, &top);
  /* Zero edits beat any typo: ten exact matches are the answer. */
  if (k > 0 && top.n < SG_BUCKET_ITEMS && len > 0) {
    if (k > SG_TYPO_MAX_K) k = SG_TYPO_MAX_K;
    size_t first = 0, n = decode_query(nq, len, &first);
    for (unsigned thr = 1; n > 0 && thr <= k && top.n < SG_BUCKET_ITEMS; thr++)
      if (thr < SG_TYPO_MAX_K || !skip_search(a, v, n, nq, first, &top))
        typo_pass(a, v, n, nq, first, thr, &top);
  }
  for (uint32_t j = 0; j < top.n; j++) {
    const unsigned char *f = v->fragidx + (uint64_t)(uint32_t)top.v[j] * SG__FRAGIDX_SIZE;
    res->items[j].json = a->frags + sg__rd32(f);
    res->items[j].len = sg__rd32(f + 4);
    res->items[j].edits = (uint8_t)(top.v[j] >> EDITS_SHIFT);
    res->items[j].tier = (uint8_t)(top.v[j] >> 32 & 0xff);
  }
  res->n = top.n;
}

void sg_artifact_query(const sg_artifact *a, int loc, const char *nq, size_t len,
                       sg_query_result *res) {
  sg_artifact_query_k(a, loc, nq, len, 0, res);
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

long sg_fragment_display_value(const sg_fragment *f, char *out, size_t cap) {
  /* In the fragment every quote inside a string is escaped, so this pattern only occurs
   * as the field itself. */
  static const char pat[] = ",\"displayValue\":\"";
  const char *p = memmem(f->json, f->len, pat, sizeof pat - 1);
  if (!p) return -1;
  p += sizeof pat - 1;
  const char *end = f->json + f->len;
  size_t o = 0;
  while (p < end && *p != '"') {
    char c = *p++;
    if (c == '\\') {
      if (p >= end) return -1;
      char e = *p++;
      switch (e) {
      case 'n': c = '\n'; break;
      case 'r': c = '\r'; break;
      case 't': c = '\t'; break;
      case 'b': c = '\b'; break;
      case 'f': c = '\f'; break;
      case 'u': {
        /* The compiler escapes only control characters this way (\u00XX). */
        if (end - p < 4) return -1;
        int v = 0;
        for (int i = 0; i < 4; i++) {
          int h = hexval(p[i]);
          if (h < 0) return -1;
          v = v << 4 | h;
        }
        p += 4;
        if (v >= 0x80) return -1;
        c = (char)v;
        break;
      }
      default: c = e;
      }
    }
    if (o + 1 >= cap) return -1;
    out[o++] = c;
  }
  if (p >= end) return -1;
  out[o] = '\0';
  return (long)o;
}
