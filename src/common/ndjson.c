/* The NDJSON line splitter; see ndjson.h. */
#include <string.h>

#include "common/ndjson.h"

void sg_ndjson_init(sg_ndjson *p, size_t max_line, sg_ndjson_line_fn fn, void *ctx) {
  memset(p, 0, sizeof *p);
  /* The buffer's own cap is the line cap, so a hostile stream cannot grow it. */
  sg_buf_init(&p->line, max_line + 1); /* + a '\r' the newline strips */
  p->max_line = max_line;
  p->fn = fn;
  p->ctx = ctx;
}

void sg_ndjson_free(sg_ndjson *p) { sg_buf_free(&p->line); }

size_t sg_ndjson_lines(const sg_ndjson *p) { return p->index; }

static bool blank(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] != ' ' && s[i] != '\t') return false;
  return true;
}

/* True when the buffered line is over the cap (a trailing '\r' does not count). */
static bool over_cap(const sg_ndjson *p) {
  size_t n = p->line.len;
  if (n && p->line.data[n - 1] == '\r') n--;
  return n > p->max_line;
}

/* Hands one complete line (without its '\n') to the callback and moves to the next. */
static int deliver(sg_ndjson *p, const char *s, size_t n) {
  int rc = 0;
  if (p->overflow) {
    rc = p->fn(p->ctx, p->index, NULL, 0, true);
  } else {
    if (n && s[n - 1] == '\r') n--;
    if (!blank(s, n)) rc = p->fn(p->ctx, p->index, s, n, false);
  }
  p->overflow = false;
  p->index++;
  sg_buf_reset(&p->line);
  if (rc) p->stopped = rc;
  return rc;
}

int sg_ndjson_feed(sg_ndjson *p, const char *data, size_t n) {
  if (p->stopped) return p->stopped;
  while (n) {
    const char *nl = memchr(data, '\n', n);
    size_t take = nl ? (size_t)(nl - data) : n;
    if (!p->overflow) {
      if (nl && p->line.len == 0 && take <= p->max_line) {
        /* The whole line is in this chunk: no copy. */
        int rc = deliver(p, data, take);
        if (rc) return rc;
        data += take + 1;
        n -= take + 1;
        continue;
      }
      /* One more byte is allowed for a '\r' that the newline will strip. */
      if (p->line.len + take > p->max_line + 1 || sg_buf_append(&p->line, data, take)) {
        p->overflow = true;
        sg_buf_reset(&p->line);
      }
    }
    if (!nl) return 0;
    if (!p->overflow && over_cap(p)) p->overflow = true;
    int rc = deliver(p, p->line.data ? p->line.data : "", p->line.len);
    if (rc) return rc;
    data += take + 1;
    n -= take + 1;
  }
  return 0;
}

int sg_ndjson_finish(sg_ndjson *p) {
  if (p->stopped) return p->stopped;
  if (p->line.len == 0 && !p->overflow) return 0;
  if (!p->overflow && over_cap(p)) p->overflow = true;
  return deliver(p, p->line.data ? p->line.data : "", p->line.len);
}
