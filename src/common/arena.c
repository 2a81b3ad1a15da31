/*
 * sg_arena: chunked bump allocation (see arena.h).
 */
#include "common/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_MIN ((size_t)1 << 20)

struct sg__arena_chunk {
  sg__arena_chunk *next;
  size_t used, cap;
  _Alignas(8) unsigned char mem[];
};

void *sg_arena_alloc(sg_arena *a, size_t n) {
  if (n > SIZE_MAX - 8 - sizeof(sg__arena_chunk)) return NULL;
  n = (n + 7) & ~(size_t)7;
  if (n == 0) n = 8;
  if (!a->head || a->head->cap - a->head->used < n) {
    size_t cap = n > CHUNK_MIN ? n : CHUNK_MIN;
    sg__arena_chunk *c = malloc(sizeof *c + cap);
    if (!c) return NULL;
    c->next = a->head;
    c->used = 0;
    c->cap = cap;
    a->head = c;
  }
  void *p = a->head->mem + a->head->used;
  a->head->used += n;
  a->total += n;
  return p;
}

char *sg_arena_strndup(sg_arena *a, const char *s, size_t n) {
  char *p = sg_arena_alloc(a, n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *sg_arena_strdup(sg_arena *a, const char *s) {
  return s ? sg_arena_strndup(a, s, strlen(s)) : NULL;
}

void sg_arena_free(sg_arena *a) {
  for (sg__arena_chunk *c = a->head, *nx; c; c = nx) {
    nx = c->next;
    free(c);
  }
  a->head = NULL;
  a->total = 0;
}
