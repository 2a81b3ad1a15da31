/*
 * sg_arena: a bump allocator for many small, same-lifetime allocations (e.g. the strings
 * of a million items loaded for one publish).
 *
 * Memory comes in chunks of at least 1 MiB; nothing is freed individually. Every pointer
 * handed out stays valid until sg_arena_free, which releases all of them at once.
 * Allocations are 8-byte aligned. Not thread-safe: one arena belongs to one thread.
 */
#ifndef SG_COMMON_ARENA_H
#define SG_COMMON_ARENA_H

#include <stddef.h>

typedef struct sg__arena_chunk sg__arena_chunk;

typedef struct {
  sg__arena_chunk *head;
  size_t total; /* bytes handed out, for logs and tests */
} sg_arena;

#define SG_ARENA_INIT                                                                              \
  { NULL, 0 }

/* Returns n bytes (uninitialised, 8-byte aligned) owned by the arena, or NULL on OOM. */
void *sg_arena_alloc(sg_arena *a, size_t n);
/* Copies s[0..n) plus a terminating NUL into the arena. NULL on OOM. */
char *sg_arena_strndup(sg_arena *a, const char *s, size_t n);
/* Copies the NUL-terminated s (NULL gives NULL without failing). */
char *sg_arena_strdup(sg_arena *a, const char *s);
/* Releases every allocation; the arena is empty and reusable afterwards. */
void sg_arena_free(sg_arena *a);

#endif
