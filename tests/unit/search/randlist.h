/*
 * Random item lists for the compiler's property tests: texts with diacritics, case,
 * punctuation runs, CJK, Hangul and emoji drawn from a small vocabulary (so prefixes are
 * shared by many keys and buckets get built), aliases, ranks with ties, hierarchies up to
 * the depth limit, and overrides in the locales "fr" and "de-CH".
 */
#ifndef SGT_RANDLIST_H
#define SGT_RANDLIST_H

#include <stddef.h>
#include <stdint.h>

#include "compiler/compiler.h"

typedef struct {
  sg_compile_item *items;
  size_t n;
  void **blocks; /* everything allocated, freed by sgt_list_free */
  size_t n_blocks, cap_blocks;
} sgt_list;

/* A small, seedable PRNG (splitmix64) so failures reproduce from the printed seed. */
uint64_t sgt_rand(uint64_t *state);
size_t sgt_rand_below(uint64_t *state, size_t n);

/* Generates n items from seed. */
void sgt_list_gen(sgt_list *l, size_t n, uint64_t seed);
/* A random text of 1 to max_words words, allocated in l. */
const char *sgt_list_text(sgt_list *l, uint64_t *st, size_t max_words);
void sgt_list_free(sgt_list *l);

/* The supported locales of the generated lists ("en" is the default). */
extern const char *const sgt_locales[3];

/* Copies the itemId out of a fragment {"itemId":"…",…} into out[cap]; returns 0 or -1. */
int sgt_fragment_id(const char *json, size_t len, char *out, size_t cap);

#endif
