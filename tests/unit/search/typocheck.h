/* Helpers of the typo property tests (typocheck.c). */
#ifndef SGT_TYPOCHECK_H
#define SGT_TYPOCHECK_H

#include <stddef.h>
#include <stdint.h>

#include "bruteforce.h"
#include "randlist.h"
#include "search/artifact.h"

typedef struct {
  size_t queries, nonempty, fuzzy_items;
  size_t tier3_items, tier4_items; /* items returned at tiers 3 and 4 (section 3.3) */
} sgt_typo_stats;

/* Compares sg_artifact_query_k (and sg_typo_highlight on its items) with the brute force
 * for one normalised query; prints both answers and returns -1 on a difference. */
int sgt_check_typo(const sg_artifact *art, int loc, const sgt_bf *bf, const sg_compile_item *items,
                   const char *nq, size_t len, unsigned k, sgt_typo_stats *stats);

/* The same for a query filtered by ancestor (docs/DESIGN.md §3.5): sg_artifact_within and
 * sg_artifact_query_within against bf, whose filter (sgt_bf_set_within) the caller set to
 * within; within NULL is sgt_check_typo. */
int sgt_check_within(const sg_artifact *art, int loc, const sgt_bf *bf,
                     const sg_compile_item *items, const char *nq, size_t len, unsigned k,
                     const char *within, sgt_typo_stats *stats);

/* Applies 1 or 2 random edits (insert, delete, substitute, swap of code points) to
 * nt[0..len) and normalises the result into out; returns its length (0: nothing left). */
size_t sgt_random_edits(const char *nt, size_t len, uint64_t *st, char *out, size_t cap);

/* A query for tiers 3 and 4 (section 3.3) from normalised text nt[0..len) into out:
 * some of its words shuffled with the last one cut short, or a prefix of it with its
 * spaces removed or moved; returns its length (0: none). */
size_t sgt_words_query(const char *nt, size_t len, uint64_t *st, char *out, size_t cap);

/* The fuzz targets' tier 3/4 queries: when the normalised input nq[0..nl) starts with
 * "1", replaces it with sgt_words_query of one of l's texts, chosen (and shuffled) by
 * seed and the rest of the input. Returns the query's length (nl when left as it is),
 * or -1 when no query could be made from the text. */
long sgt_words_from_input(const sgt_list *l, uint64_t seed, char *nq, long nl, size_t cap);

#endif
