/*
 * Reader of the compiled artifact (format in docs/ARTIFACT.md).
 *
 * An artifact is position-independent bytes (offsets, no pointers), opened either from
 * memory, by mmap (tools), or read into sealed memory of its own with its hash checked
 * (the runtime). Opening checks every offset and length once, so lookups afterwards need no
 * bounds checks and a truncated or corrupted file is rejected, never crashes the reader.
 * A lookup allocates nothing.
 */
#ifndef SG_SEARCH_ARTIFACT_H
#define SG_SEARCH_ARTIFACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler/compiler.h"

typedef struct sg_artifact sg_artifact;

/* Opens artifact bytes in memory (borrowed; must outlive the artifact). Returns 0 or -1
 * when the bytes are not a valid artifact. */
int sg_artifact_open_mem(const void *data, size_t len, sg_artifact **out);
/* mmaps path read-only and opens it. Returns 0 or -1. */
int sg_artifact_open_file(const char *path, sg_artifact **out);
/* Reads path into memory of this process's own (a sealed memfd, below), checks that its
 * SHA-256 equals content_hash ("sha256:<hex>" or the bare hex) and opens it. What the
 * runtime serves from: the copy cannot be changed or truncated by anyone else, and bytes
 * that do not hash to the contentHash are never used. Returns 0, or -1 with errno EBADMSG
 * (hash mismatch, or the file changed size while read), EINVAL (not a valid artifact) or
 * an I/O error. */
int sg_artifact_load_file(const char *path, const char *content_hash, sg_artifact **out);
void sg_artifact_close(sg_artifact *a);
/* For a caller that fills an artifact itself (the Redis edge streams its chunks in, the
 * file load reads them): an anonymous in-memory file (memfd) that takes exactly len bytes
 * written in order. The caller hashes what it writes; sg_artifact_sink_adopt then seals
 * the file against any write, shrink or growth (F_SEAL_WRITE|SHRINK|GROW|SEAL), maps it
 * read-only and opens it, and the artifact owns the mapping (closing it frees it). Written
 * through write(), the pages are never zeroed first (an anonymous copy is: the kernel
 * clears every fresh page before the copy overwrites it), and once sealed nobody, this
 * process included, can change or truncate them, so no reader can fault. NULL / -1 with
 * errno: EINVAL len too small for an artifact; EBADMSG more bytes than len, or adopting
 * before all len bytes arrived; EINVAL from adopt: not a valid artifact. Adopt consumes the
 * sink whatever it returns; sg_artifact_sink_free drops one never adopted. */
typedef struct sg_artifact_sink sg_artifact_sink;
sg_artifact_sink *sg_artifact_sink_new(size_t len);
int sg_artifact_sink_write(sg_artifact_sink *s, const void *p, size_t n);
int sg_artifact_sink_adopt(sg_artifact_sink *s, sg_artifact **out);
void sg_artifact_sink_free(sg_artifact_sink *s);
/* Moves the next at most `step` bytes (whole huge pages, at least one) of an artifact
 * loaded into sealed memory, from *done on (rounded down to a huge page), onto huge pages
 * (MADV_COLLAPSE): fewer TLB misses for the lookups, whose reads are scattered over the
 * whole artifact. The bytes and the address stay the same, so queries may run meanwhile;
 * it only takes time (a few ms per MiB), which is why the caller goes in steps, after the
 * artifact is already serving. Returns 1 after a step, 0 when nothing was left to move
 * (*done is then sg_artifact_size(a); so it is for the last step, and for an artifact
 * smaller than a huge page, whose one partial huge page stays on small pages). -1 with
 * errno when a step failed: EAGAIN, EBUSY or ENOMEM (busy pages, no huge page free just
 * now) skip that step only; ENOSYS (a kernel without the advice: before Linux 6.1),
 * EINVAL (a kernel that will not move this memory: shmem_enabled=deny, THP disabled for
 * the process) and ENOTSUP (not sealed memory of its own: sg_artifact_open_mem,
 * sg_artifact_open_file) set *done to the end. What was moved stays moved. */
int sg_artifact_settle(const sg_artifact *a, size_t *done, size_t step);

size_t sg_artifact_item_count(const sg_artifact *a);
/* The artifact's format version (docs/ARTIFACT.md, "Format versions"): SG__ART_VERSION,
 * or SG__ART_VERSION_PREV for an artifact of the previous release, served by its rules. */
uint32_t sg_artifact_format(const sg_artifact *a);
/* Whether this build opens artifacts of format version v. */
bool sg_artifact_format_readable(uint32_t version);
/* The artifact's bytes as opened (what its content hash covers). */
const void *sg_artifact_bytes(const sg_artifact *a, size_t *len);
/* Bytes of the artifact (what a loaded copy holds in memory). */
size_t sg_artifact_size(const sg_artifact *a);
const char *sg_artifact_default_locale(const sg_artifact *a);
/* Number of locales compiled in, and the tag of locale index loc (NULL when out of
 * range). The tags point into the artifact. */
size_t sg_artifact_locale_count(const sg_artifact *a);
const char *sg_artifact_locale_tag(const sg_artifact *a, int loc);
/* Sizes of locale loc's index, for `suggestd inspect` and benchmarks: keys, buckets
 * (precomputed ranges) and the scan threshold T. Returns -1 when loc is out of range. */
int sg_artifact_locale_stats(const sg_artifact *a, int loc, size_t *keys, size_t *buckets,
                             size_t *threshold);

/* Resolves a requested locale tag (may be NULL or unsupported) to the served one:
 * exact tag (case-insensitive), else its language subtag, else the default locale.
 * Returns an index usable with sg_artifact_query and sets *tag to the served tag. */
int sg_artifact_resolve_locale(const sg_artifact *a, const char *requested, const char **tag);

/* A pre-serialised item: the bytes of one JSON object
 * {"itemId":…,"value":…,"displayValue":…[,"ancestors":[…]]}, pointing into the artifact. */
typedef struct {
  const char *json;
  uint32_t len;
  uint8_t edits; /* the item's key (docs/DESIGN.md §3.1): edits and tier of its best */
  uint8_t tier;  /* candidate, which the highlight is computed from */
} sg_fragment;

typedef struct {
  sg_fragment items[SG_BUCKET_ITEMS];
  size_t n;
} sg_query_result;

/* Looks up the NORMALISED query nq[0..len) in locale index loc. Fills res with the first
 * 10 items of the relevance contract (docs/DESIGN.md §3). Allocates nothing. */
void sg_artifact_query(const sg_artifact *a, int loc, const char *nq, size_t len,
                       sg_query_result *res);

/* The same with a typo budget k (0..2, from sg_typo_budget): the first 10 items of
 * docs/DESIGN.md §3.1. k = 0 is sg_artifact_query. When the exact matches alone fill
 * 10 items nothing more is searched. Allocates nothing (per-thread scratch). */
void sg_artifact_query_k(const sg_artifact *a, int loc, const char *nq, size_t len, unsigned k,
                         sg_query_result *res);

/* The filter by ancestor of docs/DESIGN.md §3.5, resolved once per query by
 * sg_artifact_within and read by sg_artifact_query_within. */
typedef struct {
  uint32_t lo, hi; /* the descendants' preorder interval [lo, hi) (format 6) */
  uint32_t id_off; /* the ancestor's id in the fragment pool (format 5) */
  uint32_t id_len;
  uint8_t mode; /* 0: no descendant at all; 1: the interval; 2: by fragments (format 5) */
} sg_within;

/* Resolves the ancestor id[0..len) of a `within` filter. 0 with *w set, or -1 when the
 * artifact holds no item of that id (the answer is then no items). Builds the id index
 * on first use, like sg_artifact_has_item. */
int sg_artifact_within(const sg_artifact *a, const char *id, size_t len, sg_within *w);

/* sg_artifact_query_k restricted to the descendants (any depth) of w's item: the first
 * 10 of them by the same contract, taken after the filter. Exact on every format: an
 * artifact of format 5, which lacks the sections of the filter, is answered by reading
 * each candidate's ancestors in its fragment (slower, see docs/ARTIFACT.md).
 * Allocates nothing. */
void sg_artifact_query_within(const sg_artifact *a, int loc, const char *nq, size_t len, unsigned k,
                              const sg_within *w, sg_query_result *res);

/* Whether id[0..len) is the itemId of one of the artifact's items: a binary search over
 * ids sorted at open. Allocates nothing and takes no lock (the runtime's selection check,
 * docs/DESIGN.md §4.1). */
bool sg_artifact_has_item(const sg_artifact *a, const char *id, size_t len);

/* Copies the raw (unescaped) displayValue of a fragment into out[0..cap) with a NUL.
 * Returns its length, or -1 when the fragment holds none or it does not fit. */
long sg_fragment_display_value(const sg_fragment *f, char *out, size_t cap);

#endif
