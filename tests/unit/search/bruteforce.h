/*
 * A brute-force implementation of the relevance contract (docs/DESIGN.md §3), written
 * straight from the text and sharing nothing with the compiler's index except
 * sg_normalize. The property tests compare sg_artifact_query against it.
 */
#ifndef SGT_BRUTEFORCE_H
#define SGT_BRUTEFORCE_H

#include <stddef.h>

#include "compiler/compiler.h"

typedef struct sgt_bf sgt_bf;

/* Prepares the items (borrowed, must outlive the result) for queries in locale tag.
 * Returns NULL on OOM or text that does not normalise. */
sgt_bf *sgt_bf_new(const sg_compile_item *items, size_t n, const char *tag);
void sgt_bf_free(sgt_bf *bf);

/* The first 10 items for the normalised query nq[0..len) without typos (tiers 0-4,
 * sections 3 and 3.3): their indexes into items[] in out[], and their count. */
size_t sgt_bf_query(const sgt_bf *bf, const char *nq, size_t len, size_t out[10]);
/* The same with tiers 0-2 only (section 3 before 3.3: a format-5 artifact's answer). */
size_t sgt_bf_query_012(const sgt_bf *bf, const char *nq, size_t len, size_t out[10]);

/* docs/DESIGN.md §3.1 and §3.2 straight from the text: with typo budget k, the first
 * 10 items (indexes in out[]), each with its key (edits, tier), and count. */
size_t sgt_bf_query_k(const sgt_bf *bf, const char *nq, size_t len, unsigned k, size_t out[10],
                      unsigned edits[10], unsigned tier[10]);

/* The highlight pairs of item (returned with edits and tier) for nq: up to max pairs of
 * UTF-16 [start, end) into out, their count as the result. */
size_t sgt_bf_highlight(const sgt_bf *bf, size_t item, const char *nq, size_t len, unsigned edits,
                        unsigned tier, unsigned *out, size_t max);

/* The full (unbanded) OSA distance between code point arrays, for the edge tests. */
unsigned sgt_osa(const unsigned *a, size_t na, const unsigned *b, size_t nb);

/* Adds the synonym aliases of docs/DESIGN.md §3.4 for sets[0..n) to every item, after
 * its own aliases (they then match like aliases in every respect). 0, or -1 on OOM. */
int sgt_bf_add_synonyms(sgt_bf *bf, const sg_synonym_set *sets, size_t n);

/* docs/DESIGN.md §3.5: from now on the queries keep only the items that have the item id among
 * their ancestors (any depth); NULL removes the filter. */
void sgt_bf_set_within(sgt_bf *bf, const char *id);

/* The display value the item shows in the prepared locale (not normalised). */
const char *sgt_bf_display(const sgt_bf *bf, size_t item);

#endif
