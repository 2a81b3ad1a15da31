/*
 * Directory backend of the edge store (src/edge/dir: one folder per backend).
 *
 * Layout under the root (docs/EDGE.md):
 *   artifacts/<hex>.sga    compiled artifacts, content-addressed
 *   lists/ keys/ apps/ workspaces/ subscriptions/ signing-keys/   <id>.json records
 *   REVISION               decimal counter, replaced atomically on every record write
 *   CHANGES                change log: "base <rev>" then "<rev> <kind> <id>" per write
 *   <kind>/<id>.seq        sequence of the last conditional write or delete of a record
 *   .lock                  flock(2) target serialising writers across processes
 *   runtimes/<id>.json     runtime presence records (outside the revision; edge.h)
 *
 * Every file is written temp + fsync + rename + fsync(dir) (sg_write_file_atomic), so
 * a reader sees either the old or the new bytes, never a torn file. Temp files are named
 * "<name>.tmp-<random>" and are skipped by foreach. The lock is taken on a fresh open
 * file description for each write, which makes it exclude both other processes and
 * other threads of this one (flock locks belong to the open file description).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "edge/edge_internal.h"
#include "search/artifact.h"

/* The directory backend's handle: the store's root, without a trailing slash. */
typedef struct {
  sg_edge base;
  char *dir;
  int watch; /* inotify on the root (dir_wait), -1 until first needed */
} dir_edge;

static const char *root_of(const sg_edge *e) { return ((const dir_edge *)e)->dir; }

/* ---------------------------------------------------------------- paths ---------- */

static int path_of(const sg_edge *e, char *out, size_t outsz, const char *fmt1, const char *a,
                   const char *b) {
  int n = snprintf(out, outsz, "%s/%s%s%s", root_of(e), fmt1, a ? a : "", b ? b : "");
  if (n < 0 || (size_t)n >= outsz) {
    errno = ENAMETOOLONG;
    return -1;
  }
  return 0;
}

static int record_path(const sg_edge *e, sg_edge_kind k, const char *id, char *out, size_t outsz) {
  char sub[64];
  snprintf(sub, sizeof sub, "%s/", sg_edge_kind_name(k));
  return path_of(e, out, outsz, sub, id, ".json");
}

/* ---------------------------------------------------------------- revision ------- */

static int read_revision(const sg_edge *e, uint64_t *rev) {
  char p[PATH_MAX];
  if (path_of(e, p, sizeof p, "REVISION", NULL, NULL)) return -1;
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) {
      *rev = 0;
      return 0;
    }
    return -1;
  }
  char buf[32];
  ssize_t n;
  do n = read(fd, buf, sizeof buf - 1);
  while (n < 0 && errno == EINTR);
  int e2 = errno;
  close(fd);
  if (n < 0) {
    errno = e2;
    return -1;
  }
  buf[n] = '\0';
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ')) buf[--n] = '\0';
  int64_t v;
  if (sg_parse_i64(buf, 0, INT64_MAX, &v)) {
    errno = EBADMSG;
    return -1;
  }
  *rev = (uint64_t)v;
  return 0;
}

/* Takes the store-wide writer lock; returns the fd to pass to unlock, or -1. */
static int lock_store(const sg_edge *e) {
  char p[PATH_MAX];
  if (path_of(e, p, sizeof p, ".lock", NULL, NULL)) return -1;
  int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  while (flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      int e2 = errno;
      close(fd);
      errno = e2;
      return -1;
    }
  }
  return fd;
}

static void unlock_store(int fd) {
  int e2 = errno;
  flock(fd, LOCK_UN);
  close(fd);
  errno = e2;
}

/* ---------------------------------------------------------------- change log ----- */

/* The log is compacted to its newest entries (half of CHANGES_MAX bytes) once it passes
 * CHANGES_MAX bytes, some thousands of writes; a reader further behind reloads everything. */
#define CHANGES_MAX (128u * 1024)

/* Parses one "<rev> <kind> <id>" line (without its newline). */
static int parse_change(char *line, uint64_t *rev, sg_edge_kind *k, char **id) {
  char *sp1 = strchr(line, ' ');
  char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
  if (!sp2) return -1;
  *sp1 = *sp2 = '\0';
  int64_t v;
  if (sg_parse_i64(line, 1, INT64_MAX, &v)) return -1;
  *rev = (uint64_t)v;
  for (int i = 0; i < SG_EDGE__KINDS; i++)
    if (strcmp(sg_edge_kind_name((sg_edge_kind)i), sp1 + 1) == 0) {
      *k = (sg_edge_kind)i;
      *id = sp2 + 1;
      return sg_edge_id_valid(*id) ? 0 : -1;
    }
  return -1;
}

/* Reads the log: *base (entries at or below it are gone) and its lines. A log that cannot
 * be trusted (absent, torn in the middle, foreign) reads as base UINT64_MAX. */
static int read_changes(const sg_edge *e, uint64_t *base, char **text, size_t *len) {
  char p[PATH_MAX];
  *text = NULL;
  *base = UINT64_MAX;
  if (path_of(e, p, sizeof p, "CHANGES", NULL, NULL)) return -1;
  if (sg_read_file(p, 2 * CHANGES_MAX, text, len))
    return errno == ENOENT || errno == EFBIG ? 0 : -1;
  int64_t b;
  char *nl = memchr(*text, '\n', *len);
  if (nl && strncmp(*text, "base ", 5) == 0) {
    *nl = '\0';
    if (sg_parse_i64(*text + 5, 0, INT64_MAX, &b) == 0) *base = (uint64_t)b;
    *nl = '\n';
  }
  return 0;
}

/* With the lock held: keeps the newest CHANGES_MAX / 2 bytes of entries. */
static int compact_changes(const sg_edge *e, const char *p) {
  uint64_t base;
  char *text;
  size_t len;
  if (read_changes(e, &base, &text, &len)) return -1;
  if (!text || base == UINT64_MAX) {
    free(text);
    return 0;
  }
  /* Skip the base line and the oldest entries; the last one skipped is the new base. */
  char *at = text, *end = text + len;
  for (size_t skip = 0; (size_t)(end - at) > CHANGES_MAX / 2; skip++) {
    char *nl = memchr(at, '\n', (size_t)(end - at));
    if (!nl) break;
    if (skip > 0) {
      char *sp = memchr(at, ' ', (size_t)(nl - at));
      int64_t v;
      if (sp) *sp = '\0';
      if (sp && sg_parse_i64(at, 1, INT64_MAX, &v) == 0) base = (uint64_t)v;
    }
    at = nl + 1;
  }
  char head[40];
  int hn = snprintf(head, sizeof head, "base %llu\n", (unsigned long long)base);
  size_t keep = (size_t)(end - at);
  char *out = malloc((size_t)hn + keep);
  int rc = -1;
  if (out) {
    memcpy(out, head, (size_t)hn);
    memcpy(out + hn, at, keep);
    rc = sg_write_file_atomic(p, out, (size_t)hn + keep);
    free(out);
  }
  free(text);
  return rc;
}

/* With the lock held: appends "<rev> <kind> <id>" to the log (creating it with the
 * revision before this write as its base), compacting it when it grew too long. */
static int log_change(const sg_edge *e, uint64_t rev, sg_edge_kind k, const char *id) {
  char p[PATH_MAX], line[SG_EDGE_MAX_ID + 64];
  if (path_of(e, p, sizeof p, "CHANGES", NULL, NULL)) return -1;
  struct stat st;
  if (stat(p, &st) != 0) {
    int n = snprintf(line, sizeof line, "base %llu\n", (unsigned long long)(rev - 1));
    if (errno != ENOENT || sg_write_file_atomic(p, line, (size_t)n)) return -1;
  } else if ((size_t)st.st_size > CHANGES_MAX && compact_changes(e, p)) {
    return -1;
  }
  int n = snprintf(line, sizeof line, "%llu %s %s\n", (unsigned long long)rev, sg_edge_kind_name(k),
                   id);
  int fd = open(p, O_RDWR | O_APPEND | O_CLOEXEC);
  if (fd < 0) return -1;
  /* A writer killed mid-append leaves a torn last line: cut it, or the next entry would be
   * glued to it and every reader would take the log for damaged. */
  char tail[SG_EDGE_MAX_ID + 64];
  off_t size = lseek(fd, 0, SEEK_END),
        from = size > (off_t)sizeof tail ? size - (off_t)sizeof tail : 0;
  ssize_t got = size > 0 ? pread(fd, tail, (size_t)(size - from), from) : 0;
  if (got > 0 && tail[got - 1] != '\n') {
    ssize_t i = got - 1;
    while (i >= 0 && tail[i] != '\n') i--;
    if (ftruncate(fd, from + i + 1) != 0) {
      close(fd);
      return -1;
    }
  }
  ssize_t w;
  do w = write(fd, line, (size_t)n);
  while (w < 0 && errno == EINTR);
  int rc = (w == n && fdatasync(fd) == 0) ? 0 : -1;
  int e2 = errno;
  close(fd);
  errno = e2;
  return rc;
}

static int dir_changes_since(sg_edge *e, uint64_t since, sg_edge_change_cb cb, void *ctx,
                             uint64_t *upto) {
  /* The revision first: every entry up to it is already in the log (a writer appends
   * before it bumps), and entries past it are left for the next call. */
  if (read_revision(e, upto)) return -1;
  if (since == *upto) return 0;
  uint64_t base;
  char *text;
  size_t len = 0;
  if (read_changes(e, &base, &text, &len)) return -1;
  if (!text || base == UINT64_MAX || since < base || since > *upto) {
    free(text);
    return SG_EDGE_TOO_OLD;
  }
  /* Every revision in (since, upto] must have its entry, in order (a writer killed between
   * its append and its bump leaves a second entry of one revision, which is harmless); a
   * gap means REVISION moved without the log (a hand edit): read everything. */
  int rc = 0;
  uint64_t last = since;
  char *end = text + len, *at = memchr(text, '\n', len);
  for (at = at ? at + 1 : end; rc == 0 && at < end;) {
    char *nl = memchr(at, '\n', (size_t)(end - at));
    if (!nl) break; /* a torn last line: its write never returned */
    *nl = '\0';
    uint64_t r;
    sg_edge_kind k;
    char *id;
    if (parse_change(at, &r, &k, &id)) {
      rc = SG_EDGE_TOO_OLD; /* damaged: trust none of it */
    } else if (r > since && r <= *upto) {
      if (r != last && r != last + 1) rc = SG_EDGE_TOO_OLD;
      last = r;
      if (rc == 0) rc = cb(k, id, r, ctx);
    }
    at = nl + 1;
  }
  free(text);
  return rc == 0 && last != *upto ? SG_EDGE_TOO_OLD : rc;
}

/* With the lock held: REVISION = REVISION + 1, after logging the change of (k, id). */
static int bump_revision(const sg_edge *e, sg_edge_kind k, const char *id, uint64_t *out) {
  uint64_t r;
  if (read_revision(e, &r)) return -1;
  r++;
  char p[PATH_MAX], buf[32];
  if (log_change(e, r, k, id) || path_of(e, p, sizeof p, "REVISION", NULL, NULL)) return -1;
  int n = snprintf(buf, sizeof buf, "%llu\n", (unsigned long long)r);
  if (sg_write_file_atomic(p, buf, (size_t)n)) return -1;
  if (out) *out = r;
  return 0;
}

/* ---------------------------------------------------------------- operations ----- */

/* True when the file at p holds exactly len bytes whose SHA-256 is hex. */
static bool file_has_hash(const char *p, size_t len, const char *hex) {
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size == len;
  crypto_hash_sha256_state h;
  crypto_hash_sha256_init(&h);
  static __thread unsigned char buf[1 << 16];
  size_t total = 0;
  while (ok) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ok = false;
    if (n <= 0) break;
    crypto_hash_sha256_update(&h, buf, (unsigned long long)n);
    total += (size_t)n;
  }
  close(fd);
  if (!ok || total != len) return false;
  uint8_t d[32];
  char got[65];
  crypto_hash_sha256_final(&h, d);
  sg_hex(d, sizeof d, got);
  return strcmp(got, hex) == 0;
}

static int dir_put_artifact(sg_edge *e, const char *hex, const void *data, size_t len) {
  char p[PATH_MAX];
  if (path_of(e, p, sizeof p, "artifacts/", hex, ".sga")) return -1;
  /* Content-addressed: an existing file of that name is kept only when its bytes still
   * hash to the name (a crash can leave it short, a disk can damage it); otherwise it is
   * replaced, which is what repairs a damaged artifact on the next publish. */
  if (file_has_hash(p, len, hex)) return utimensat(AT_FDCWD, p, NULL, 0);
  return sg_write_file_atomic(p, data, len);
}

static int dir_artifacts(sg_edge *e, sg_edge_artifact_cb cb, void *ctx) {
  char d[PATH_MAX];
  if (path_of(e, d, sizeof d, "artifacts", NULL, NULL)) return -1;
  DIR *dir = opendir(d);
  if (!dir) return -1;
  int dfd = dirfd(dir), rc = 0;
  struct dirent *de;
  while (rc == 0 && (de = readdir(dir))) {
    /* "<64 hex>.sga" exactly: temp files and anything foreign are left alone. */
    if (strlen(de->d_name) != 68 || strcmp(de->d_name + 64, ".sga") != 0) continue;
    char hex[65];
    memcpy(hex, de->d_name, 64);
    hex[64] = '\0';
    if (strspn(hex, "0123456789abcdef") != 64) continue;
    struct stat st;
    if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    rc = cb(hex, (int64_t)st.st_mtime, ctx);
  }
  closedir(dir);
  return rc;
}

static int dir_sweep_temp(sg_edge *e, int64_t older_than_s, size_t *removed) {
  char d[PATH_MAX];
  if (path_of(e, d, sizeof d, "artifacts", NULL, NULL)) return -1;
  DIR *dir = opendir(d);
  if (!dir) return -1;
  int dfd = dirfd(dir);
  time_t now = time(NULL);
  struct dirent *de;
  while ((de = readdir(dir))) {
    /* "<64 hex>.sga.tmp-<random>", as sg_write_file_atomic names its temp files. */
    if (strlen(de->d_name) <= 72 || strncmp(de->d_name + 64, ".sga.tmp-", 9) != 0) continue;
    struct stat st;
    if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        (int64_t)(now - st.st_mtime) < older_than_s)
      continue;
    if (unlinkat(dfd, de->d_name, 0) == 0) (*removed)++;
  }
  closedir(dir);
  return 0;
}

static int dir_del_artifact(sg_edge *e, const char *hex) {
  char p[PATH_MAX];
  if (path_of(e, p, sizeof p, "artifacts/", hex, ".sga")) return -1;
  return unlink(p);
}

static int dir_artifact_stat(sg_edge *e, const char *hex, uint64_t *size) {
  char p[PATH_MAX];
  struct stat st;
  if (path_of(e, p, sizeof p, "artifacts/", hex, ".sga") || stat(p, &st) != 0) return -1;
  if (!S_ISREG(st.st_mode)) {
    errno = ENOENT; /* a directory or device under that name is no artifact */
    return -1;
  }
  *size = (uint64_t)st.st_size;
  return 0;
}

static int dir_artifact_load(sg_edge *e, const char *hex, sg_artifact **out) {
  char p[PATH_MAX];
  if (path_of(e, p, sizeof p, "artifacts/", hex, ".sga")) return -1;
  return sg_artifact_load_file(p, hex, out);
}

/* With the lock held: writes the record and bumps the revision. */
static int put_locked(sg_edge *e, sg_edge_kind k, const char *id, const char *json, size_t len,
                      uint64_t *rev) {
  char p[PATH_MAX];
  if (record_path(e, k, id, p, sizeof p)) return -1;
  int rc = sg_write_file_atomic(p, json, len);
  if (rc == 0) rc = bump_revision(e, k, id, rev);
  return rc;
}

/* With the lock held: removes the record and bumps the revision (ENOENT when absent). */
static int del_locked(sg_edge *e, sg_edge_kind k, const char *id, uint64_t *rev) {
  char p[PATH_MAX];
  if (record_path(e, k, id, p, sizeof p)) return -1;
  if (unlink(p) != 0) return -1;
  char d[PATH_MAX];
  if (path_of(e, d, sizeof d, sg_edge_kind_name(k), NULL, NULL) == 0) {
    int dfd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      fsync(dfd);
      close(dfd);
    }
  }
  return bump_revision(e, k, id, rev);
}

/* ---------------------------------------------------------------- sequences ------ */

static int seq_path(const sg_edge *e, sg_edge_kind k, const char *id, char *out, size_t outsz) {
  char sub[64];
  snprintf(sub, sizeof sub, "%s/", sg_edge_kind_name(k));
  return path_of(e, out, outsz, sub, id, ".seq");
}

/* With the lock held: SG_EDGE_STALE when (k, id) was written with a sequence above seq,
 * else records seq (before the record itself, so a crash in between can only make a
 * retry of the same sequence necessary, never let an older one through). */
static int claim_seq(const sg_edge *e, sg_edge_kind k, const char *id, uint64_t seq) {
  char p[PATH_MAX], *old = NULL, buf[32];
  size_t len;
  if (seq_path(e, k, id, p, sizeof p)) return -1;
  if (sg_read_file(p, 31, &old, &len) == 0) {
    int64_t v;
    while (len > 0 && old[len - 1] == '\n') old[--len] = '\0';
    bool stale = sg_parse_i64(old, 0, INT64_MAX, &v) == 0 && (uint64_t)v > seq;
    free(old);
    if (stale) return SG_EDGE_STALE;
  } else if (errno != ENOENT) {
    return -1;
  }
  int n = snprintf(buf, sizeof buf, "%llu\n", (unsigned long long)seq);
  return sg_write_file_atomic(p, buf, (size_t)n);
}

static int dir_put(sg_edge *e, sg_edge_kind k, const char *id, const char *json, size_t len,
                   uint64_t *rev) {
  int fd = lock_store(e);
  if (fd < 0) return -1;
  int rc = put_locked(e, k, id, json, len, rev);
  unlock_store(fd);
  return rc;
}

static int dir_del(sg_edge *e, sg_edge_kind k, const char *id, uint64_t *rev) {
  int fd = lock_store(e);
  if (fd < 0) return -1;
  int rc = del_locked(e, k, id, rev);
  unlock_store(fd);
  return rc;
}

static int dir_update(sg_edge *e, sg_edge_kind k, const char *id, sg_edge_build_cb build, void *ctx,
                      uint64_t *rev) {
  int fd = lock_store(e);
  if (fd < 0) return -1;
  char *json = NULL;
  size_t len = 0;
  uint64_t seq = 0;
  int b = build(ctx, &json, &len, &seq);
  int rc = -1, claim = 0;
  if (b == 0 && len > SG_EDGE_MAX_RECORD)
    errno = EFBIG;
  else if (b >= 0 && seq > INT64_MAX)
    errno = EINVAL;
  else if (b >= 0 && seq > 0 && (claim = claim_seq(e, k, id, seq)) != 0)
    rc = claim == SG_EDGE_STALE && read_revision(e, rev) == 0 ? SG_EDGE_STALE : -1;
  else if (b == 0)
    rc = put_locked(e, k, id, json, len, rev);
  else if (b == 1 && (rc = del_locked(e, k, id, rev)) != 0 && errno == ENOENT)
    rc = read_revision(e, rev); /* already absent: nothing to do */
  else if (b < 0)
    errno = EIO;
  free(json);
  unlock_store(fd);
  return rc;
}

static int dir_put_if_newer(sg_edge *e, sg_edge_kind k, const char *id, const char *json,
                            size_t len, uint64_t seq, uint64_t *rev) {
  int fd = lock_store(e);
  if (fd < 0) return -1;
  int rc = claim_seq(e, k, id, seq);
  if (rc == 0)
    rc = put_locked(e, k, id, json, len, rev);
  else if (rc == SG_EDGE_STALE && read_revision(e, rev))
    rc = -1;
  unlock_store(fd);
  return rc;
}

static int dir_del_if_newer(sg_edge *e, sg_edge_kind k, const char *id, uint64_t seq,
                            uint64_t *rev) {
  int fd = lock_store(e);
  if (fd < 0) return -1;
  int rc = claim_seq(e, k, id, seq);
  if (rc == 0 && (rc = del_locked(e, k, id, rev)) != 0 && errno == ENOENT)
    rc = read_revision(e, rev); /* already absent: nothing to do */
  else if (rc == SG_EDGE_STALE && read_revision(e, rev))
    rc = -1;
  unlock_store(fd);
  return rc;
}

static int dir_get(sg_edge *e, sg_edge_kind k, const char *id, char **json, size_t *len) {
  char p[PATH_MAX];
  if (record_path(e, k, id, p, sizeof p)) return -1;
  return sg_read_file(p, SG_EDGE_MAX_RECORD, json, len);
}

static int dir_revision(sg_edge *e, uint64_t *rev) { return read_revision(e, rev); }

/* "<valid id>.json" exactly; skips temp files and anything foreign. */
static int record_name(const struct dirent *d) {
  size_t n = strlen(d->d_name);
  if (n <= 5 || n - 5 > SG_EDGE_MAX_ID || strcmp(d->d_name + n - 5, ".json") != 0) return 0;
  char id[SG_EDGE_MAX_ID + 1];
  memcpy(id, d->d_name, n - 5);
  id[n - 5] = '\0';
  return sg_edge_id_valid(id);
}

static int dir_foreach(sg_edge *e, sg_edge_kind k, sg_edge_foreach_cb cb, void *ctx) {
  char d[PATH_MAX];
  if (path_of(e, d, sizeof d, sg_edge_kind_name(k), NULL, NULL)) return -1;
  struct dirent **names = NULL;
  int n = scandir(d, &names, record_name, alphasort);
  if (n < 0) return -1;
  int rc = 0;
  for (int i = 0; i < n; i++) {
    if (rc == 0) {
      char p[PATH_MAX], id[SG_EDGE_MAX_ID + 1];
      size_t nl = strlen(names[i]->d_name) - 5;
      memcpy(id, names[i]->d_name, nl);
      id[nl] = '\0';
      char *json = NULL;
      size_t len = 0;
      if (snprintf(p, sizeof p, "%s/%s", d, names[i]->d_name) < (int)sizeof p &&
          sg_read_file(p, SG_EDGE_MAX_RECORD, &json, &len) == 0) {
        rc = cb(id, json, len, ctx);
        free(json);
      } else if (errno != ENOENT) {
        rc = -1;
      }
    }
    free(names[i]);
  }
  free(names);
  return rc;
}

/* ---------------------------------------------------------------- guard stamp ---- */

/* STAMP holds the guard stamp's text (sg_edge_stamp_format), replaced atomically. */
static int dir_stamp_get(sg_edge *e, char out[72]) {
  char p[PATH_MAX], *text = NULL;
  size_t len = 0;
  if (path_of(e, p, sizeof p, "STAMP", NULL, NULL) || sg_read_file(p, 71, &text, &len)) return -1;
  memcpy(out, text, len);
  out[len] = '\0';
  free(text);
  return 0;
}

static int dir_stamp_put(sg_edge *e, const sg_edge_stamp *expect, const sg_edge_stamp *s,
                         const char *text) {
  char p[PATH_MAX], cur_text[72];
  if (path_of(e, p, sizeof p, "STAMP", NULL, NULL)) return -1;
  int fd = lock_store(e);
  if (fd < 0) return -1;
  sg_edge_stamp cur = {0};
  int rc = 0;
  if (dir_stamp_get(e, cur_text) == 0) {
    if (sg_edge_stamp_parse(cur_text, strlen(cur_text), &cur)) cur = (sg_edge_stamp){0};
  } else if (errno != ENOENT) {
    rc = -1;
  }
  if (rc == 0) {
    bool ok = expect ? cur.present && sg_edge_stamp_cmp(&cur, expect) == 0
                     : !cur.present || sg_edge_stamp_cmp(s, &cur) > 0;
    rc = !ok ? SG_EDGE_STALE : sg_write_file_atomic(p, text, strlen(text));
  }
  unlock_store(fd);
  return rc;
}

static int dir_raise_revision(sg_edge *e, uint64_t min, uint64_t *rev) {
  int fd = lock_store(e);
  if (fd < 0) return -1;
  uint64_t r;
  int rc = read_revision(e, &r);
  if (rc == 0 && r < min) {
    char p[PATH_MAX], buf[32];
    int n = snprintf(buf, sizeof buf, "%llu\n", (unsigned long long)min);
    rc = path_of(e, p, sizeof p, "REVISION", NULL, NULL) ? -1
                                                         : sg_write_file_atomic(p, buf, (size_t)n);
    r = min;
  }
  unlock_store(fd);
  if (rc == 0) *rev = r;
  return rc;
}

/* ---------------------------------------------------------------- runtimes ------- */

/* runtimes/<id>.json, one per runtime process, written atomically like every record but
 * outside the lock and the revision (heartbeats change nothing served). Liveness is the
 * record's own heartbeat and ttl on this host's clock; a record dead for a day is removed
 * by the next walk, so a fleet that restarts often does not pile them up. */
#define RUNTIME_REMOVE_AFTER_MS (24 * 3600 * 1000LL)

static int dir_runtime_put(sg_edge *e, const char *id, const char *json, size_t len,
                           int64_t ttl_s) {
  (void)ttl_s; /* the record carries its own */
  char p[PATH_MAX];
  if (path_of(e, p, sizeof p, "runtimes", NULL, NULL) || sg_mkdirs(p, 0755) ||
      path_of(e, p, sizeof p, "runtimes/", id, ".json"))
    return -1;
  return sg_write_file_atomic(p, json, len);
}

static int dir_runtime_del(sg_edge *e, const char *id) {
  char p[PATH_MAX];
  if (path_of(e, p, sizeof p, "runtimes/", id, ".json")) return -1;
  return unlink(p) == 0 || errno == ENOENT ? 0 : -1;
}

static int dir_runtimes(sg_edge *e, sg_edge_foreach_cb cb, void *ctx) {
  char d[PATH_MAX];
  if (path_of(e, d, sizeof d, "runtimes", NULL, NULL)) return -1;
  struct dirent **names = NULL;
  int n = scandir(d, &names, record_name, alphasort);
  if (n < 0) return errno == ENOENT ? 0 : -1; /* no runtime ever announced itself */
  int64_t now = sg_now_ms();
  int rc = 0;
  for (int i = 0; i < n; i++) {
    char p[PATH_MAX], *json = NULL;
    size_t len = 0;
    if (rc == 0 && snprintf(p, sizeof p, "%s/%s", d, names[i]->d_name) < (int)sizeof p &&
        sg_read_file(p, SG_EDGE_RUNTIME_MAX, &json, &len) == 0) {
      sg_edge_runtime_rec r;
      if (sg_edge_runtime_decode(json, len, &r) == 0 && sg_edge_runtime_live(&r, now))
        rc = cb(r.id, json, len, ctx);
      else if (r.heartbeat_ms > 0 && now - r.heartbeat_ms > RUNTIME_REMOVE_AFTER_MS)
        unlink(p);
      free(json);
    }
    free(names[i]);
  }
  free(names);
  return rc;
}

/* The artifacts are files here already: there is no cache to keep or prune. */
static int dir_set_cache_dir(sg_edge *e, const char *dir) { return 0; }

static int dir_cache_prune(sg_edge *e, const char *const *keep, size_t n, int64_t older_than_s,
                           size_t *removed) {
  *removed = 0;
  return 0;
}

static int usable_dir(const char *path) {
  struct stat sb;
  if (stat(path, &sb)) return -1;
  if (!S_ISDIR(sb.st_mode)) {
    errno = ENOTDIR;
    return -1;
  }
  return access(path, R_OK | W_OK | X_OK);
}

/* A missing REVISION file reads as revision 0 (a fresh store), so reading the revision
 * alone would call a directory that was moved away healthy: the root and every folder
 * must be directories this process may read and write. */
static int dir_check(sg_edge *e) {
  if (usable_dir(root_of(e))) return -1;
  char p[PATH_MAX];
  for (int k = 0; k <= SG_EDGE__KINDS; k++) {
    const char *sub = k < SG_EDGE__KINDS ? sg_edge_kind_name((sg_edge_kind)k) : "artifacts";
    if (path_of(e, p, sizeof p, sub, NULL, NULL) || usable_dir(p)) return -1;
  }
  return 0;
}

/* A sign of change: REVISION and STAMP are replaced by a rename into the root (every
 * record write renames REVISION), so a file moved or written there wakes the waiter. The
 * watch is made on first use and made again when the root went away (moved, deleted). */
static int dir_wait(sg_edge *e, int stop_fd, int timeout_ms) {
  dir_edge *de = (dir_edge *)e;
  if (de->watch < 0) {
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0) return -1;
    if (inotify_add_watch(fd, de->dir,
                          IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF) < 0) {
      int e2 = errno;
      close(fd);
      errno = e2;
      return -1;
    }
    de->watch = fd;
  }
  struct pollfd p[2] = {{.fd = de->watch, .events = POLLIN}, {.fd = stop_fd, .events = POLLIN}};
  if (poll(p, stop_fd >= 0 ? 2 : 1, timeout_ms) < 0 && errno != EINTR) return -1;
  /* Drained, so the next wait sleeps until the next change. */
  _Alignas(struct inotify_event) char buf[4096];
  bool gone = false;
  for (;;) {
    ssize_t n = read(de->watch, buf, sizeof buf);
    if (n <= 0) break;
    for (ssize_t at = 0; at + (ssize_t)sizeof(struct inotify_event) <= n;) {
      struct inotify_event ev;
      memcpy(&ev, buf + at, sizeof ev);
      if (ev.mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) gone = true;
      at += (ssize_t)sizeof ev + (ssize_t)ev.len;
    }
  }
  if (gone) {
    close(de->watch);
    de->watch = -1;
  }
  return 0;
}

static void dir_close(sg_edge *e) {
  if (((dir_edge *)e)->watch >= 0) close(((dir_edge *)e)->watch);
  free(((dir_edge *)e)->dir);
  free(e);
}

static const sg__edge_ops dir_ops = {
    .put_artifact = dir_put_artifact,
    .artifact_stat = dir_artifact_stat,
    .artifact_load = dir_artifact_load,
    .artifacts = dir_artifacts,
    .del_artifact = dir_del_artifact,
    .sweep_temp = dir_sweep_temp,
    .put = dir_put,
    .del = dir_del,
    .update = dir_update,
    .put_if_newer = dir_put_if_newer,
    .del_if_newer = dir_del_if_newer,
    .changes_since = dir_changes_since,
    .get = dir_get,
    .revision = dir_revision,
    .wait = dir_wait,
    .foreach = dir_foreach,
    .stamp_get = dir_stamp_get,
    .stamp_put = dir_stamp_put,
    .raise_revision = dir_raise_revision,
    .set_cache_dir = dir_set_cache_dir,
    .cache_prune = dir_cache_prune,
    .runtime_put = dir_runtime_put,
    .runtime_del = dir_runtime_del,
    .runtimes = dir_runtimes,
    .check = dir_check,
    .close = dir_close,
};

int sg__edge_dir_open(const char *dir, sg_edge **out) {
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/') n--;
  if (n == 0 || n > PATH_MAX - 64) {
    errno = EINVAL;
    return -1;
  }
  dir_edge *de = calloc(1, sizeof *de);
  if (!de) return -1;
  de->base.ops = &dir_ops;
  de->watch = -1;
  de->dir = strndup(dir, n);
  if (!de->dir) {
    free(de);
    return -1;
  }
  sg_edge *e = &de->base;
  char p[PATH_MAX];
  if (sg_mkdirs(de->dir, 0755) || path_of(e, p, sizeof p, "artifacts", NULL, NULL) ||
      sg_mkdirs(p, 0755))
    goto fail;
  for (int k = 0; k < SG_EDGE__KINDS; k++)
    if (path_of(e, p, sizeof p, sg_edge_kind_name((sg_edge_kind)k), NULL, NULL) ||
        sg_mkdirs(p, 0755))
      goto fail;
  *out = e;
  return 0;
fail:;
  int e2 = errno;
  dir_close(e);
  errno = e2;
  return -1;
}
