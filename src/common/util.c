#include "common/util.h"

#include "common/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int64_t clock_offset_s;

int sg_init(void) {
  if (sodium_init() < 0) return -1;
  const char *off = getenv("SUGGESTD_CLOCK_OFFSET");
  int64_t v;
  if (off && *off && sg_parse_i64(off, -((int64_t)1 << 40), (int64_t)1 << 40, &v) == 0)
    clock_offset_s = v;
  return 0;
}

int64_t sg_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + clock_offset_s * 1000;
}

int64_t sg_now_s(void) { return sg_now_ms() / 1000; }

int64_t sg_mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sg_rfc3339(int64_t unix_s, char out[32]) {
  time_t t = (time_t)unix_s;
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void sg_random_bytes(void *out, size_t n) { randombytes_buf(out, n); }

void sg_random_id(const char *prefix, char *out, size_t outsz) {
  static const char alphabet[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  size_t pl = strlen(prefix);
  if (outsz < pl + 23) {
    if (outsz) out[0] = '\0';
    return;
  }
  memcpy(out, prefix, pl);
  /* One getrandom per id, not one per character (imports create millions of ids).
   * Bytes of 248 and above are rejected so that b % 62 stays uniform. */
  size_t i = 0;
  while (i < 22) {
    unsigned char r[32];
    randombytes_buf(r, sizeof r);
    for (size_t k = 0; k < sizeof r && i < 22; k++)
      if (r[k] < 248) out[pl + i++] = alphabet[r[k] % 62];
  }
  out[pl + 22] = '\0';
}

/* Two digits per byte from one table read (request ids and ETags are hexed per query). */
#define HEX2(i) "0123456789abcdef"[(i) >> 4], "0123456789abcdef"[(i)&15]
#define HEX2x4(i) HEX2(i), HEX2(i + 1), HEX2(i + 2), HEX2(i + 3)
#define HEX2x16(i) HEX2x4(i), HEX2x4(i + 4), HEX2x4(i + 8), HEX2x4(i + 12)
#define HEX2x64(i) HEX2x16(i), HEX2x16(i + 16), HEX2x16(i + 32), HEX2x16(i + 48)
static const char hex_pairs[512] = {HEX2x64(0), HEX2x64(64), HEX2x64(128), HEX2x64(192)};

void sg_hex(const void *p, size_t n, char *out) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) memcpy(out + 2 * i, hex_pairs + 2 * b[i], 2);
  out[2 * n] = '\0';
}

/* Large inputs (artifacts) through libcrypto's SHA instructions; short ones stay on
 * libsodium (no allocation). The digest is the same either way. */
void sg_sha256(const void *data, size_t n, uint8_t out[32]) {
  if (n < 65536 || sg_sha256_big(data, n, out) != 0) crypto_hash_sha256(out, data, n);
}

void sg_sha256_tagged(const void *data, size_t n, char out[72]) {
  uint8_t d[32];
  sg_sha256(data, n, d);
  memcpy(out, "sha256:", 7);
  sg_hex(d, 32, out + 7);
}

bool sg_ct_equal(const void *a, const void *b, size_t n) { return sodium_memcmp(a, b, n) == 0; }

bool sg_utf8_valid(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s, *end = p + n;
  while (p < end) {
    /* Eight bytes at a time while they are ASCII without a NUL (nearly every query). */
    while (end - p >= 8) {
      uint64_t w;
      memcpy(&w, p, 8);
      if (sg_swar_high(w) | sg_swar_zero(w)) break;
      p += 8;
    }
    if (p == end) break;
    unsigned c = *p;
    if (c == 0) return false;
    if (c < 0x80) {
      p++;
      continue;
    }
    size_t len;
    unsigned cp;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
    } else
      return false;
    if ((size_t)(end - p) < len) return false;
    for (size_t i = 1; i < len; i++) {
      if ((p[i] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return false;
    if (cp >= 0xD800 && cp <= 0xDFFF) return false;
    p += len;
  }
  return true;
}

size_t sg_utf8_count(const char *s, size_t n) {
  size_t c = 0;
  for (size_t i = 0; i < n; i++)
    if (((unsigned char)s[i] & 0xC0) != 0x80) c++;
  return c;
}

int sg_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out) {
  if (!s || !*s) return -1;
  const char *p = s;
  bool neg = false;
  if (*p == '-') {
    neg = true;
    p++;
  }
  if (!*p) return -1;
  uint64_t v = 0;
  for (; *p; p++) {
    if (*p < '0' || *p > '9') return -1;
    unsigned d = (unsigned)(*p - '0');
    if (v > (UINT64_MAX - d) / 10) return -1;
    v = v * 10 + d;
    if (v > (uint64_t)INT64_MAX + 1) return -1;
  }
  int64_t r;
  if (neg) {
    if (v == (uint64_t)INT64_MAX + 1)
      r = INT64_MIN;
    else
      r = -(int64_t)v;
  } else {
    if (v > (uint64_t)INT64_MAX) return -1;
    r = (int64_t)v;
  }
  if (r < min || r > max) return -1;
  *out = r;
  return 0;
}

static int fsync_dir_of(const char *path) {
  char dir[PATH_MAX];
  size_t n = strlen(path);
  if (n >= sizeof dir) return -1;
  memcpy(dir, path, n + 1);
  char *slash = strrchr(dir, '/');
  if (slash == dir)
    slash[1] = '\0';
  else if (slash)
    *slash = '\0';
  else
    strcpy(dir, ".");
  int fd = open(dir, O_RDONLY | O_DIRECTORY);
  if (fd < 0) return -1;
  int rc = fsync(fd);
  close(fd);
  return rc;
}

int sg_fsync_parent(const char *path) { return fsync_dir_of(path); }

int sg_fsync_path(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  int rc = fsync(fd);
  int e2 = errno;
  close(fd);
  errno = e2;
  return rc;
}

int sg_temp_path(const char *path, char *out, size_t cap) {
  char rnd[17];
  uint8_t r[8];
  sg_random_bytes(r, sizeof r);
  sg_hex(r, sizeof r, rnd);
  if (snprintf(out, cap, "%s.tmp-%s", path, rnd) >= (int)cap) {
    errno = ENAMETOOLONG;
    return -1;
  }
  return 0;
}

int sg_write_file_atomic(const char *path, const void *data, size_t n) {
  char tmp[PATH_MAX];
  if (sg_temp_path(path, tmp, sizeof tmp)) return -1;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  const char *p = data;
  size_t left = n;
  while (left) {
    ssize_t w = write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      goto fail;
    }
    p += w;
    left -= (size_t)w;
  }
  if (fsync(fd)) goto fail;
  if (close(fd)) {
    fd = -1;
    goto fail;
  }
  fd = -1;
  if (rename(tmp, path)) goto fail;
  return fsync_dir_of(path);
fail:;
  int e = errno;
  if (fd >= 0) close(fd);
  unlink(tmp);
  errno = e;
  return -1;
}

int sg_read_file(const char *path, size_t limit, char **out, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap + 1);
  if (!buf) {
    fclose(f);
    return -1;
  }
  for (;;) {
    if (n == cap) {
      if (cap >= limit) {
        free(buf);
        fclose(f);
        errno = EFBIG;
        return -1;
      }
      size_t ncap = cap * 2 > limit ? limit : cap * 2;
      char *nb = realloc(buf, ncap + 1);
      if (!nb) {
        free(buf);
        fclose(f);
        return -1;
      }
      buf = nb;
      cap = ncap;
    }
    size_t r = fread(buf + n, 1, cap - n, f);
    n += r;
    if (r == 0) break;
  }
  int err = ferror(f);
  fclose(f);
  if (err) {
    free(buf);
    errno = EIO;
    return -1;
  }
  buf[n] = '\0';
  *out = buf;
  if (len) *len = n;
  return 0;
}

int sg_mkdirs(const char *path, unsigned mode) {
  char tmp[PATH_MAX];
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof tmp) {
    errno = EINVAL;
    return -1;
  }
  memcpy(tmp, path, n + 1);
  for (char *p = tmp + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(tmp, mode) && errno != EEXIST) return -1;
    *p = '/';
  }
  if (mkdir(tmp, mode) && errno != EEXIST) return -1;
  return 0;
}

bool sg_etag_match(const char *if_match, const char *etag) {
  size_t el = strlen(etag);
  const char *p = if_match;
  while (*p) {
    while (*p == ' ' || *p == ',') p++;
    if (!*p) break;
    const char *start = p;
    while (*p && *p != ',') p++;
    const char *end = p;
    while (end > start && end[-1] == ' ') end--;
    size_t n = (size_t)(end - start);
    if (n == 1 && *start == '*') return true;
    if (n == el && memcmp(start, etag, n) == 0) return true;
  }
  return false;
}
