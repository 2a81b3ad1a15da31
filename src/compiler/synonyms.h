/*
 * Synonym sets -> extra aliases (docs/DESIGN.md §3.4), for the compiler (compile.c) only.
 *
 * Per item and locale, for each candidate text c (the normalised displayValue, then the
 * normalised aliases) and each set in order, each phrase s of the set that occurs in c as
 * whole words (its first occurrence) gives c with that occurrence replaced by each other
 * phrase s' (equivalent: every other phrase of the set in order; one-way: only the input,
 * and only when s is one of the phrases). No chaining; texts equal to a candidate or to an
 * earlier result are dropped; at most SG_SYNONYM_ALIASES_MAX results, in this order.
 */
#ifndef SG_COMPILER_SYNONYMS_H
#define SG_COMPILER_SYNONYMS_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "compiler/compiler.h"

/* The sets with every phrase normalised once and indexed by its first word. */
typedef struct sg__synonyms sg__synonyms;

/* Prepares sets[0..n) (borrowed only for the call). NULL on OOM. A phrase that normalises
 * to nothing is ignored (validation refuses it before it is stored). */
sg__synonyms *sg__synonyms_new(const sg_synonym_set *sets, size_t n);
void sg__synonyms_free(sg__synonyms *sy);

/* A normalised text: bytes [t, t + len). */
typedef struct {
  const char *t;
  uint32_t len;
} sg__span;

/* The extra aliases of one item in one locale. */
typedef struct {
  sg_buf text; /* the results' bytes, back to back */
  uint32_t off[SG_SYNONYM_ALIASES_MAX], len[SG_SYNONYM_ALIASES_MAX];
  size_t n;
} sg__synonym_out;

/* Computes the extra aliases of the candidates cand[0..n) (normalised; the displayValue
 * first, then the aliases) into *out (initialised by the caller with sg_buf_init on
 * out->text; reset here). 0, or -1 on OOM. */
int sg__synonyms_expand(const sg__synonyms *sy, const sg__span *cand, size_t n,
                        sg__synonym_out *out);

#endif
