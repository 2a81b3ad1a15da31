/*
 * Directory backend of the edge store.
 *
 * Layout under the root (docs/EDGE.md):
 *   artifacts/<hex>.sga    compiled artifacts, content-addressed
 *   lists/ keys/ apps/ workspaces/ subscriptions/ signing-keys/   <id>.json records
 *   REVISION               decimal counter, replaced atomically on every record write
 *   .lock                  flock(2) target serialising writers across processes
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
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "edge/edge_internal.h"

/* ---------------------------------------------------------------- paths ---------- */

static int path_of(const sg_edge *e, char *out, size_t outsz, const char *fmt1, const char *a,
                   const char *b) {
  int n = snprintf(out, outsz, "%s/%s%s%s", e->dir, fmt1, a ? a : "", b ? b : "");
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

/* With the lock held: REVISION = REVISION + 1. */
static int bump_revision(const sg_edge *e, uint64_t *out) {
  uint64_t r;
  if (read_revision(e, &r)) return -1;
  r++;
  char p[PATH_MAX], buf[32];
  if (path_of(e, p, sizeof p, "REVISION", NULL, NULL)) return -1;
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

static int dir_artifact_path(sg_edge *e, const char *hex, char *out, size_t outsz) {
  return path_of(e, out, outsz, "artifacts/", hex, ".sga");
}

/* With the lock held: writes the record and bumps the revision. */
static int put_locked(sg_edge *e, sg_edge_kind k, const char *id, const char *json, size_t len,
                      uint64_t *rev) {
  char p[PATH_MAX];
  if (record_path(e, k, id, p, sizeof p)) return -1;
  int rc = sg_write_file_atomic(p, json, len);
  if (rc == 0) rc = bump_revision(e, rev);
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
  return bump_revision(e, rev);
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
  int b = build(ctx, &json, &len);
  int rc = -1;
  if (b == 0 && len > SG_EDGE_MAX_RECORD)
    errno = EFBIG;
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

static void dir_close(sg_edge *e) {
  free(e->dir);
  free(e);
}

static const sg__edge_ops dir_ops = {
    .put_artifact = dir_put_artifact,
    .artifact_path = dir_artifact_path,
    .artifacts = dir_artifacts,
    .del_artifact = dir_del_artifact,
    .sweep_temp = dir_sweep_temp,
    .put = dir_put,
    .del = dir_del,
    .update = dir_update,
    .get = dir_get,
    .revision = dir_revision,
    .foreach = dir_foreach,
    .close = dir_close,
};

int sg__edge_dir_open(const char *dir, sg_edge **out) {
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/') n--;
  if (n == 0 || n > PATH_MAX - 64) {
    errno = EINVAL;
    return -1;
  }
  sg_edge *e = calloc(1, sizeof *e);
  if (!e) return -1;
  e->ops = &dir_ops;
  e->dir = strndup(dir, n);
  if (!e->dir) {
    free(e);
    return -1;
  }
  char p[PATH_MAX];
  if (sg_mkdirs(e->dir, 0755) || path_of(e, p, sizeof p, "artifacts", NULL, NULL) ||
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
