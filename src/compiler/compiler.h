/*
 * The compiler: a list's items -> one immutable, deterministic artifact.
 *
 * Input items are plain C structs (the control plane fills them from the store,
 * `suggestd compile` from JSONL). Strings are UTF-8 and borrowed for the call.
 */
#ifndef SG_COMPILER_COMPILER_H
#define SG_COMPILER_COMPILER_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

#define SG_MAX_HIERARCHY_DEPTH 16
#define SG_BUCKET_ITEMS 10

typedef struct {
  const char *locale;         /* BCP-47 tag as written in the item's "locales" */
  const char *display_value;  /* NULL: fall back to the base displayValue */
  const char *const *aliases; /* NULL: fall back to the base aliases */
  size_t n_aliases;
  const char *description; /* NULL: fall back to the base description */
} sg_item_locale;

typedef struct {
  const char *id; /* "itm_…" */
  const char *value;
  const char *display_value; /* never NULL (defaults to value upstream) */
  const char *const *aliases;
  size_t n_aliases;
  int64_t rank;
  const char *parent_id; /* NULL when the item has no parent */
  const sg_item_locale *locales;
  size_t n_locales;
  /* Display only (docs/DESIGN.md §2): never a key, never normalised; the fragment of a locale
   * carries the locale's own, else this one, and nothing when neither is set. NULL: none. */
  const char *description;
} sg_compile_item;

/* A synonym set (docs/DESIGN.md §3.4), validated upstream (control/synonyms_put.c): equivalent
 * (input NULL, 2-20 phrases) or one-way (input set, 1-20 phrases). Texts are raw UTF-8;
 * the compiler normalises them. */
typedef struct {
  const char *input; /* one-way sets only; NULL for an equivalent set */
  const char *const *phrases;
  size_t n_phrases;
} sg_synonym_set;

/* At most this many synonym aliases per item and locale (not counted against the item's
 * own aliases). */
#define SG_SYNONYM_ALIASES_MAX 20

typedef struct {
  const char *default_locale;           /* e.g. "en" */
  const char *const *supported_locales; /* includes default_locale */
  size_t n_supported;
  size_t max_items; /* 0: no limit */
} sg_compile_opts;

/* One validation error: {itemId, path, reason, message}. Strings are malloc'd; item_id
 * is NULL for a list-level error (too_many_items). */
typedef struct {
  char *item_id;
  char *path;   /* e.g. "value", "parentId", "locales.fr" */
  char *reason; /* duplicate_value | unknown_parent | parent_cycle | hierarchy_too_deep
                   | unsupported_locale | too_many_items, and for input the control plane
                   already refuses: duplicate_id | invalid_text | missing_field */
  char *message;
} sg_validation_error;

typedef struct {
  sg_validation_error *v;
  size_t n, cap;
} sg_validation_errors;

void sg_validation_errors_free(sg_validation_errors *e);

/* Validates items against opts. Returns the number of errors appended to *errs
 * (0 = valid), or -1 on OOM. At most 1000 errors are recorded. */
long sg_validate(const sg_compile_item *items, size_t n, const sg_compile_opts *opts,
                 sg_validation_errors *errs);

/* Compiles valid items into artifact bytes appended to *out (initialised by the caller,
 * no limit). Deterministic: the same items and opts (in any input order) give the same
 * bytes. Returns 0, or -1 on OOM / invalid input (run sg_validate first). */
int sg_compile(const sg_compile_item *items, size_t n, const sg_compile_opts *opts, sg_buf *out);
/* sg_compile with the list's synonym sets sets[0..n_sets) (in order; NULL / 0 for none):
 * they become extra aliases of each item in each locale (synonyms.h, docs/DESIGN.md §3.4), which
 * the artifact holds as ordinary aliases, so the runtime needs nothing new. */
int sg_compile_synonyms(const sg_compile_item *items, size_t n, const sg_compile_opts *opts,
                        const sg_synonym_set *sets, size_t n_sets, sg_buf *out);
/* sg_compile leaving out sections, only to measure what they cost (bench/words.sh's
 * references); publishing never uses it. leave_out is a set of:
 * - SG_LEAVE_OUT_WORDS: the sections of tiers 3 and 4 (docs/DESIGN.md §3.3), so the artifact
 *   never matches at those tiers (`suggestd compile --without-words`);
 * - SG_LEAVE_OUT_SKIP: the skip tables, written empty (docs/ARTIFACT.md): the typo search
 *   then takes its plain walk, with the same answers, slower (`--without-skip-tables`). */
#define SG_LEAVE_OUT_WORDS 1u
#define SG_LEAVE_OUT_SKIP 2u
int sg_compile_leaving_out(const sg_compile_item *items, size_t n, const sg_compile_opts *opts,
                           unsigned leave_out, sg_buf *out);

#endif
