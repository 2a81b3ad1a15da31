/*
 * sg_buf: a growable byte buffer with a hard cap.
 *
 * Every buffer that grows from network input is created with a cap; an append that
 * would pass it fails with -1 and leaves the buffer as it was. The data is always
 * NUL-terminated (the NUL is not counted in len) so it can be handed to C string APIs.
 * Ownership: the buffer owns data; sg_buf_free releases it; sg_buf_steal hands it over.
 */
#ifndef SG_COMMON_BUF_H
#define SG_COMMON_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  char *data;
  size_t len;
  size_t cap;   /* allocated bytes */
  size_t limit; /* hard cap on len; 0 means SIZE_MAX */
} sg_buf;

void sg_buf_init(sg_buf *b, size_t limit);
void sg_buf_free(sg_buf *b);
void sg_buf_reset(sg_buf *b); /* len = 0, keeps memory */
int sg_buf_reserve(sg_buf *b, size_t extra);
int sg_buf_append(sg_buf *b, const void *p, size_t n);
int sg_buf_puts(sg_buf *b, const char *s);
int sg_buf_putc(sg_buf *b, char c);
int sg_buf_printf(sg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s as a JSON string literal (quotes and escapes included). */
int sg_buf_json_str(sg_buf *b, const char *s, size_t n);
/* Returns data (caller frees) and resets the buffer to empty. */
char *sg_buf_steal(sg_buf *b, size_t *len);

#endif
