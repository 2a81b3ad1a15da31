#include "common/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sg_buf_init(sg_buf *b, size_t limit) {
  b->data = NULL;
  b->len = 0;
  b->cap = 0;
  b->limit = limit ? limit : SIZE_MAX - 1;
}

void sg_buf_free(sg_buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

void sg_buf_reset(sg_buf *b) {
  b->len = 0;
  if (b->data) b->data[0] = '\0';
}

int sg_buf_reserve(sg_buf *b, size_t extra) {
  if (extra > b->limit - b->len) return -1;
  size_t need = b->len + extra + 1;
  if (need <= b->cap) return 0;
  size_t ncap = b->cap ? b->cap : 64;
  while (ncap < need) ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
  char *p = realloc(b->data, ncap);
  if (!p) return -1;
  if (!b->data) p[0] = '\0'; /* a fresh allocation is an empty string, not garbage */
  b->data = p;
  b->cap = ncap;
  return 0;
}

int sg_buf_append(sg_buf *b, const void *p, size_t n) {
  if (sg_buf_reserve(b, n)) return -1;
  if (n) memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = '\0';
  return 0;
}

int sg_buf_puts(sg_buf *b, const char *s) { return sg_buf_append(b, s, strlen(s)); }

int sg_buf_putc(sg_buf *b, char c) { return sg_buf_append(b, &c, 1); }

int sg_buf_printf(sg_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char tmp[256];
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return -1;
  if ((size_t)n < sizeof tmp) return sg_buf_append(b, tmp, (size_t)n);
  if (sg_buf_reserve(b, (size_t)n)) return -1;
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
  return 0;
}

static int json_str(sg_buf *b, const char *s, size_t n);

/* All or nothing, like every other append: a literal that does not fit under the cap is
 * rolled back rather than left half-written (which would corrupt the JSON around it). */
int sg_buf_json_str(sg_buf *b, const char *s, size_t n) {
  size_t len0 = b->len;
  if (json_str(b, s, n) == 0) return 0;
  b->len = len0;
  if (b->data) b->data[len0] = '\0';
  return -1;
}

static int json_str(sg_buf *b, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  if (sg_buf_putc(b, '"')) return -1;
  size_t run = 0; /* start of the pending run of bytes that need no escape */
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    if (sg_buf_append(b, s + run, i - run)) return -1;
    run = i + 1;
    char esc[7] = {'\\', 0};
    size_t elen = 2;
    switch (c) {
    case '"': esc[1] = '"'; break;
    case '\\': esc[1] = '\\'; break;
    case '\n': esc[1] = 'n'; break;
    case '\r': esc[1] = 'r'; break;
    case '\t': esc[1] = 't'; break;
    case '\b': esc[1] = 'b'; break;
    case '\f': esc[1] = 'f'; break;
    default:
      esc[1] = 'u';
      esc[2] = '0';
      esc[3] = '0';
      esc[4] = hex[c >> 4];
      esc[5] = hex[c & 15];
      elen = 6;
    }
    if (sg_buf_append(b, esc, elen)) return -1;
  }
  if (sg_buf_append(b, s + run, n - run)) return -1;
  return sg_buf_putc(b, '"');
}

char *sg_buf_steal(sg_buf *b, size_t *len) {
  if (!b->data && sg_buf_reserve(b, 0)) return NULL;
  char *p = b->data;
  if (len) *len = b->len;
  b->data = NULL;
  b->len = b->cap = 0;
  return p;
}
