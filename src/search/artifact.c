/*
 * The artifact reader and verifier: validates the bytes once at open (layout in format.h,
 * docs/ARTIFACT.md), and reads a locale's names and sizes and a fragment's displayValue.
 * The lookups are lookup.c (exact) and typo_search.c (typos), over the views filled here.
 *
 * Open checks every section against the file size and every record that holds an
 * offset or an index (keys, buckets, fragment index) against what it points into. The
 * order of keys and buckets is not checked: a corrupted order can only give wrong
 * answers, since every binary search stays inside its checked array.
 */
#include "search/artifact.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sha256.h"
#include "common/util.h"
#include "compiler/format.h"
#include "search/internal.h"

/* True when [off, off + count * size) lies inside a file of len bytes. */
static bool in_file(uint64_t off, uint64_t count, uint64_t size, size_t len) {
  if (off > len) return false;
  if (size && count > (len - off) / size) return false;
  return true;
}

static int check_locale(const unsigned char *d, size_t len, uint32_t version,
                        const unsigned char *rec, const char *tags, uint64_t tags_len,
                        uint64_t frags_len, uint32_t n_items, locale_view *v) {
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
  v->skip_size = version >= 6 ? SG__SKIP_SIZE : SG__SKIP_SIZE_V5;
  for (unsigned t = 0; t < SG__SKIP_TABLES; t++) {
    uint64_t off = sg__rd64(rec + (t ? SG__LOC_SKIP1_OFF : SG__LOC_SKIP_OFF));
    v->n_skip[t] = sg__rd64(rec + (t ? SG__LOC_SKIP1_N : SG__LOC_SKIP_N));
    if (!in_file(off, v->n_skip[t], v->skip_size, len) || off % 8) return -1;
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
  /* Trie nodes: key ranges inside the keys (a child's never empty: it has more than
   * SG__TRIE_MIN keys), children after their parent (so a walk always ends) and inside
   * the node array. */
  for (uint64_t i = 0; i < v->n_trie; i++) {
    uint32_t x = (uint32_t)i; /* n_trie fits 32 bits: checked with the section */
    uint32_t lo = sg__trie_rd(v, x, SG__T_LO), hi = sg__trie_rd(v, x, SG__T_HI);
    uint32_t first = sg__trie_rd(v, x, SG__T_FIRST), n = sg__trie_rd(v, x, SG__T_N);
    if (lo > hi || hi > v->n_keys || (i > 0 && lo == hi)) return -1;
    if (n && (first <= i || (uint64_t)first + n > v->n_trie)) return -1;
  }
  /* Skip records: a named node inside the trie and not its root (so never empty, by the
   * trie check above: its record is not read here, and open stays one sequential pass
   * over the table), a run inside the keys and never empty. */
  for (unsigned t = 0; t < SG__SKIP_TABLES; t++)
    for (uint64_t i = 0; i < v->n_skip[t]; i++) {
      const unsigned char *r = v->skip[t] + i * v->skip_size;
      uint32_t w = sg__rd32(r + 8);
      if (v->skip_size == SG__SKIP_SIZE && (w & SG__SKIP_NODE)) {
        if ((w & ~SG__SKIP_NODE) == 0 || (w & ~SG__SKIP_NODE) >= v->n_trie) return -1;
        continue;
      }
      uint32_t lo = 0, hi = 0;
      sg__skip_run(v, r, &lo, &hi);
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
int sg__fragment_id(const sg_artifact *a, uint32_t ord, uint32_t *off, uint32_t *len) {
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

/* Sorts the items' ids for sg_artifact_has_item, once (see ids_ready). An artifact whose
 * fragments carry no id (none the compiler writes) simply answers false for every id.
 * -1 when memory runs out (the next lookup tries again). */
static int build_id_index(sg_artifact *a) {
  if (atomic_load_explicit(&a->ids_ready, memory_order_acquire)) return 0;
  pthread_mutex_lock(&a->ids_mu);
  int rc = 0;
  if (!atomic_load_explicit(&a->ids_ready, memory_order_relaxed)) {
    uint32_t n = 0, *ids = a->n_items ? malloc((size_t)a->n_items * 3 * sizeof *ids) : NULL;
    if (a->n_items && !ids) {
      rc = -1;
    } else {
      for (uint32_t i = 0; i < a->n_items; i++)
        if (sg__fragment_id(a, i, &ids[3 * n], &ids[3 * n + 1]) == 0) ids[3 * n++ + 2] = i;
      if (n) qsort_r(ids, n, 3 * sizeof *ids, id_cmp, (void *)a->frags);
      a->ids = ids;
      a->n_ids = n;
      atomic_store_explicit(&a->ids_ready, true, memory_order_release);
    }
  }
  pthread_mutex_unlock(&a->ids_mu);
  return rc;
}

long sg__artifact_item_ord(const sg_artifact *ca, const char *id, size_t len) {
  if (!ca || !id || len == 0 || len > UINT32_MAX) return -1;
  /* The index is built behind a lock, once; the artifact is otherwise read-only. */
  sg_artifact *a = (sg_artifact *)ca;
  if (build_id_index(a)) return -1;
  size_t lo = 0, hi = a->n_ids;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const uint32_t *e = &a->ids[3 * mid];
    size_t n = e[1] < len ? e[1] : len;
    int c = memcmp(a->frags + e[0], id, n);
    if (c == 0) c = (e[1] > len) - (e[1] < len);
    if (c == 0) return e[2];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return -1;
}

bool sg_artifact_has_item(const sg_artifact *a, const char *id, size_t len) {
  return sg__artifact_item_ord(a, id, len) >= 0;
}

/* Checks the extension directory of a format-6 artifact: records inside the file, sorted
 * by (kind, locale) without repeats, of known kinds and existing locales, each section
 * 8-byte aligned inside the file. What a section holds is checked by its feature. */
static int check_exts(const unsigned char *d, size_t len, uint32_t n_loc, uint64_t off,
                      uint64_t n) {
  if (n > (uint64_t)SG__EXT_KINDS * (n_loc + 1u) || !in_file(off, n, SG__EXT_SIZE, len) || off % 8)
    return -1;
  for (uint64_t i = 0; i < n; i++) {
    const unsigned char *r = d + off + i * SG__EXT_SIZE;
    uint32_t kind = sg__rd32(r), loc = sg__rd32(r + 4);
    uint64_t so = sg__rd64(r + 8), sl = sg__rd64(r + 16);
    if ((uint64_t)kind + 1 > SG__EXT_KINDS || (loc >= n_loc && loc != SG__EXT_GLOBAL)) return -1;
    if (!in_file(so, sl, 1, len) || so % 8) return -1;
    if (i) {
      const unsigned char *p = r - SG__EXT_SIZE;
      uint32_t pk = sg__rd32(p), pl = sg__rd32(p + 4);
      if (pk > kind || (pk == kind && pl >= loc)) return -1;
    }
  }
  return 0;
}

const unsigned char *sg__artifact_ext(const sg_artifact *a, uint32_t kind, uint32_t loc,
                                      uint64_t *len) {
  for (uint64_t i = 0; i < a->n_ext; i++) {
    const unsigned char *r = a->ext + i * SG__EXT_SIZE;
    if (sg__rd32(r) == kind && sg__rd32(r + 4) == loc) {
      *len = sg__rd64(r + 16);
      return a->data + sg__rd64(r + 8);
    }
  }
  *len = 0;
  return NULL;
}

uint32_t sg_artifact_format(const sg_artifact *a) { return a->version; }

bool sg_artifact_format_readable(uint32_t version) {
  return version == SG__ART_VERSION || version == SG__ART_VERSION_PREV;
}

int sg_artifact_open_mem(const void *data, size_t len, sg_artifact **out) {
  const unsigned char *d = data;
  *out = NULL;
  if (!d || len < SG__HDR_SIZE_V5 || memcmp(d, SG__ART_MAGIC, 8) != 0) return -1;
  uint32_t version = sg__rd32(d + SG__HDR_VERSION);
  if (!sg_artifact_format_readable(version)) return -1;
  uint32_t hsz = sg__hdr_size(version);
  if (len < hsz || sg__rd64(d + SG__HDR_TOTAL_LEN) != len) return -1;
  uint32_t n_loc = sg__rd32(d + SG__HDR_N_LOCALES), def = sg__rd32(d + SG__HDR_DEFAULT);
  uint32_t hdr_len = sg__rd32(d + SG__HDR_HEADER_LEN);
  if (n_loc == 0 || n_loc > SG__MAX_LOCALES || def >= n_loc) return -1;
  if (hdr_len != hsz + (uint64_t)n_loc * SG__LOC_SIZE || hdr_len > len) return -1;
  uint64_t tags_off = sg__rd64(d + SG__HDR_TAGS_OFF), tags_len = sg__rd64(d + SG__HDR_TAGS_LEN);
  uint64_t frags_off = sg__rd64(d + SG__HDR_FRAGS_OFF), frags_len = sg__rd64(d + SG__HDR_FRAGS_LEN);
  if (!in_file(tags_off, tags_len, 1, len) || !in_file(frags_off, frags_len, 1, len)) return -1;
  uint64_t ext_off = 0, n_ext = 0;
  if (version >= 6) {
    ext_off = sg__rd64(d + SG__HDR_EXT_OFF);
    n_ext = sg__rd64(d + SG__HDR_EXT_N);
    if (check_exts(d, len, n_loc, ext_off, n_ext)) return -1;
  }

  sg_artifact *a = calloc(1, sizeof *a + n_loc * sizeof(locale_view));
  if (!a) return -1;
  a->data = d;
  a->len = len;
  a->version = version;
  a->ext = d + ext_off;
  a->n_ext = n_ext;
  a->n_items = sg__rd32(d + SG__HDR_ITEM_COUNT);
  a->n_locales = n_loc;
  a->def = def;
  a->threshold = sg__rd32(d + SG__HDR_THRESHOLD);
  a->frags = (const char *)d + frags_off;
  for (uint32_t l = 0; l < n_loc; l++)
    if (check_locale(d, len, version, d + hsz + (size_t)l * SG__LOC_SIZE,
                     (const char *)d + tags_off, tags_len, frags_len, a->n_items, &a->loc[l]) ||
        sg__words_open(a, l, &a->loc[l])) {
      for (uint32_t j = 0; j <= l; j++) sg__words_close(&a->loc[j]);
      free(a);
      return -1;
    }
  if (sg__within_open(a)) {
    for (uint32_t j = 0; j < n_loc; j++) sg__words_close(&a->loc[j]);
    free(a);
    return -1;
  }
  pthread_mutex_init(&a->ids_mu, NULL);
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

struct sg_artifact_sink {
  int fd;
  size_t len, at;
};

/* The advice that moves a range onto huge pages at once (Linux 6.1; older headers lack
 * the constant, older kernels answer EINVAL even for an empty range). */
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

/* The size of a huge page: the kernel's PMD size (2 MiB on x86-64; 2, 32 or 512 MiB on
 * arm64, by base page size), read once; 2 MiB when the kernel does not say. */
static size_t huge_page(void) {
  static _Atomic size_t size;
  size_t s = atomic_load_explicit(&size, memory_order_relaxed);
  if (s) return s;
  s = (size_t)2 << 20;
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "re");
  if (f) {
    unsigned long long v;
    if (fscanf(f, "%llu", &v) == 1 && v >= 4096 && v <= (1ull << 30) && !(v & (v - 1)))
      s = (size_t)v;
    fclose(f);
  }
  atomic_store_explicit(&size, s, memory_order_relaxed);
  return s;
}

/* A read-only shared mapping of fd's len bytes that starts on a huge-page boundary, so
 * that sg_artifact_settle can back it with huge pages (a huge page maps an aligned range
 * of the file at an aligned address). The address is reserved with len plus one huge page
 * and the slack either side given back; small artifacts take a plain mapping. */
static void *map_aligned(int fd, size_t len) {
  int flags = MAP_SHARED | MAP_POPULATE;
  size_t huge = huge_page();
  if (len < huge) return mmap(NULL, len, PROT_READ, flags, fd, 0);
  size_t pg = (size_t)sysconf(_SC_PAGESIZE);
  size_t span = (len + pg - 1) / pg * pg;
  char *res =
      mmap(NULL, span + huge, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (res == MAP_FAILED) return MAP_FAILED;
  char *at = (char *)(((uintptr_t)res + huge - 1) & ~(uintptr_t)(huge - 1));
  void *m = mmap(at, len, PROT_READ, flags | MAP_FIXED, fd, 0);
  if (m == MAP_FAILED) {
    int e = errno;
    munmap(res, span + huge);
    errno = e;
    return MAP_FAILED;
  }
  if (at > res) munmap(res, (size_t)(at - res));
  size_t tail = (size_t)(res + span + huge - (at + span));
  if (tail) munmap(at + span, tail);
  return m;
}

sg_artifact_sink *sg_artifact_sink_new(size_t len) {
  if (len < SG__HDR_SIZE_V5) {
    errno = EINVAL;
    return NULL;
  }
  sg_artifact_sink *s = malloc(sizeof *s);
  if (!s) return NULL;
  /* Not a file of the runtime's cache nor of the edge store: memory only this process
   * holds (a descriptor, closed once mapped), sealed before it is mapped. Shared memory is
   * not written into huge pages unless the administrator allows it
   * (/sys/kernel/mm/transparent_hugepage/shmem_enabled); sg_artifact_settle moves it onto
   * them afterwards (docs/RUNTIME.md, "Artifacts in memory"). */
  s->fd = memfd_create("suggestd-artifact", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  /* Sized first (no memory is taken until written): with shmem_enabled=within_size the
   * kernel then backs the pages being written with huge pages. */
  if (s->fd < 0 || ftruncate(s->fd, (off_t)len)) {
    int e = errno;
    if (s->fd >= 0) close(s->fd);
    free(s);
    errno = e;
    return NULL;
  }
  s->len = len;
  s->at = 0;
  return s;
}

int sg_artifact_sink_write(sg_artifact_sink *s, const void *p, size_t n) {
  if (n > s->len - s->at) {
    errno = EBADMSG;
    return -1;
  }
  const char *c = p;
  while (n) {
    ssize_t w = write(s->fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (w == 0) errno = EIO;
      return -1;
    }
    c += w;
    n -= (size_t)w;
    s->at += (size_t)w;
  }
  return 0;
}

void sg_artifact_sink_free(sg_artifact_sink *s) {
  if (!s) return;
  int e = errno;
  close(s->fd);
  free(s);
  errno = e;
}

int sg_artifact_sink_adopt(sg_artifact_sink *s, sg_artifact **out) {
  *out = NULL;
  size_t len = s->len;
  if (s->at != len) {
    sg_artifact_sink_free(s);
    errno = EBADMSG;
    return -1;
  }
  /* Sealed before it is mapped: from here on the bytes the caller hashed are the bytes
   * served, and the size can never drop under a reader. */
  if (fcntl(s->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)) {
    sg_artifact_sink_free(s);
    return -1;
  }
  /* Populated now, on the loader thread, so the first queries take no page faults. */
  void *m = map_aligned(s->fd, len);
  sg_artifact_sink_free(s);
  if (m == MAP_FAILED) return -1;
  if (sg_artifact_open_mem(m, len, out) != 0) {
    munmap(m, len);
    errno = EINVAL;
    return -1;
  }
  (*out)->map = m;
  (*out)->sealed = true;
  return 0;
}

int sg_artifact_settle(const sg_artifact *a, size_t *done, size_t step) {
  if (!a->sealed) {
    *done = a->len;
    errno = ENOTSUP;
    return -1;
  }
  size_t huge = huge_page();
  size_t end = a->len / huge * huge;
  size_t at = *done / huge * huge; /* a step starts on a huge page */
  if (at >= end) {
    *done = a->len;
    return 0;
  }
  size_t n = end - at < step ? end - at : step;
  n = n < huge ? huge : n / huge * huge;
  char *p = (char *)a->map + at;
  if (madvise(p, n, MADV_COLLAPSE)) {
    int e = errno;
    /* EINVAL is also what a kernel says of one range it cannot move (shmem_enabled=deny,
     * THP disabled for the process); an empty range tells whether it knows the advice. */
    if (e == EINVAL && madvise(p, 0, MADV_COLLAPSE)) e = ENOSYS;
    /* A page busy, or no huge page free just now: this step only. Else the rest too. */
    bool passing = e == EAGAIN || e == EBUSY || e == ENOMEM;
    *done = passing && at + n < end ? at + n : a->len;
    errno = e;
    return -1;
  }
  *done = at + n < end ? at + n : a->len;
  return 1;
}

/* Bytes read per step; two pieces alternate (below). */
#define LOAD_PIECE (1u << 20)

/* Hashing beside copying. The loader reads piece k into one of two buffers, hands it to
 * a hashing thread, and writes it into the sink while it is hashed; it hands piece k + 1
 * only once piece k is hashed, so the other buffer is always free to read into. The bytes
 * hashed are the bytes written: one buffer, read by both, changed by neither until both
 * are done with it. SHA-256 (~1.8 GB/s with the CPU's SHA instructions) and the kernel's
 * copy into shared memory (page by page) each took about half of an activation on one
 * thread; side by side they overlap (docs/PERFORMANCE.md, "Activation"). Without a
 * thread (pthread_create failed) the loader hashes each piece itself. */
typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  sg_sha256_ctx *h;
  const unsigned char *p; /* the piece handed and not yet hashed, or NULL */
  size_t n;
  bool done; /* no piece will follow */
} hasher;

static void *hasher_main(void *arg) {
  hasher *x = arg;
  pthread_mutex_lock(&x->mu);
  for (;;) {
    while (!x->p && !x->done) pthread_cond_wait(&x->cv, &x->mu);
    if (!x->p) break;
    const unsigned char *p = x->p;
    size_t n = x->n;
    pthread_mutex_unlock(&x->mu);
    sg_sha256_add(x->h, p, n);
    pthread_mutex_lock(&x->mu);
    x->p = NULL;
    pthread_cond_broadcast(&x->cv);
  }
  pthread_mutex_unlock(&x->mu);
  return NULL;
}

/* Waits until the piece handed last is hashed; then hands p[0..n) when p is not NULL. */
static void hasher_hand(hasher *x, const unsigned char *p, size_t n) {
  pthread_mutex_lock(&x->mu);
  while (x->p) pthread_cond_wait(&x->cv, &x->mu);
  if (p) {
    x->p = p;
    x->n = n;
    pthread_cond_broadcast(&x->cv);
  }
  pthread_mutex_unlock(&x->mu);
}

int sg_artifact_load_file(const char *path, const char *content_hash, sg_artifact **out) {
  *out = NULL;
  const char *want = content_hash;
  if (strncmp(want, "sha256:", 7) == 0) want += 7;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < SG__HDR_SIZE_V5) {
    close(fd);
    errno = EINVAL;
    return -1;
  }
  size_t len = (size_t)st.st_size;
  sg_artifact_sink *s = sg_artifact_sink_new(len);
  unsigned char *pieces = s ? malloc(2 * (size_t)LOAD_PIECE) : NULL;
  sg_sha256_ctx *h = pieces ? sg_sha256_begin() : NULL;
  if (!h) {
    int e = errno;
    free(pieces);
    sg_artifact_sink_free(s);
    close(fd);
    errno = e;
    return -1;
  }
  hasher x = {.h = h};
  pthread_t th;
  bool threaded = pthread_mutex_init(&x.mu, NULL) == 0;
  if (threaded && pthread_cond_init(&x.cv, NULL) != 0) {
    pthread_mutex_destroy(&x.mu);
    threaded = false;
  }
  if (threaded && pthread_create(&th, NULL, hasher_main, &x) != 0) {
    pthread_cond_destroy(&x.cv);
    pthread_mutex_destroy(&x.mu);
    threaded = false;
  }
  (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  size_t got = 0;
  int werr = 0;
  for (unsigned k = 0; got < len; k ^= 1) {
    unsigned char *piece = pieces + (size_t)k * LOAD_PIECE;
    size_t want_n = len - got < LOAD_PIECE ? len - got : LOAD_PIECE;
    ssize_t n = read(fd, piece, want_n);
    if (n < 0 && errno == EINTR) {
      k ^= 1; /* the same buffer again */
      continue;
    }
    if (n <= 0) break; /* an error, or the file shrank since fstat */
    if (threaded)
      hasher_hand(&x, piece, (size_t)n);
    else
      sg_sha256_add(h, piece, (size_t)n);
    if (sg_artifact_sink_write(s, piece, (size_t)n)) {
      werr = errno;
      break;
    }
    got += (size_t)n;
  }
  close(fd);
  if (threaded) {
    hasher_hand(&x, NULL, 0); /* the last piece hashed */
    pthread_mutex_lock(&x.mu);
    x.done = true;
    pthread_cond_broadcast(&x.cv);
    pthread_mutex_unlock(&x.mu);
    pthread_join(th, NULL);
    pthread_cond_destroy(&x.cv);
    pthread_mutex_destroy(&x.mu);
  }
  free(pieces);
  uint8_t d[32];
  char hex[65] = "";
  if (sg_sha256_end(h, d) == 0) sg_hex(d, sizeof d, hex);
  if (werr) {
    sg_artifact_sink_free(s);
    errno = werr; /* out of memory for the copy: not the file's fault */
    return -1;
  }
  if (got != len || strcmp(hex, want) != 0) {
    sg_artifact_sink_free(s);
    errno = EBADMSG;
    return -1;
  }
  return sg_artifact_sink_adopt(s, out);
}

void sg_artifact_close(sg_artifact *a) {
  if (!a) return;
  if (a->map) munmap(a->map, a->len);
  free(a->ids);
  for (uint32_t l = 0; l < a->n_locales; l++) sg__words_close(&a->loc[l]);
  pthread_mutex_destroy(&a->ids_mu);
  free(a);
}

size_t sg_artifact_item_count(const sg_artifact *a) { return a->n_items; }

const void *sg_artifact_bytes(const sg_artifact *a, size_t *len) {
  *len = a->len;
  return a->data;
}

size_t sg_artifact_size(const sg_artifact *a) { return a->len; }

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
