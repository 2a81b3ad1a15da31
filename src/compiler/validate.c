/*
 * Publish validation: everything that would make a list uncompilable or ambiguous.
 *
 * Errors come in a fixed order so that the same items give the same validationErrors
 * whatever order the store returns them in: first the list-level too_many_items, then
 * item by item in id order, and per item in the order duplicate_id, invalid_text,
 * duplicate_value, unsupported_locale (in the item's locales order), unknown_parent,
 * parent_cycle, hierarchy_too_deep.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/util.h"
#include "compiler/compiler.h"

#define MAX_ERRORS 1000
#define NO_PARENT UINT32_MAX

void sg_validation_errors_free(sg_validation_errors *e) {
  for (size_t i = 0; i < e->n; i++) {
    free(e->v[i].item_id);
    free(e->v[i].path);
    free(e->v[i].reason);
    free(e->v[i].message);
  }
  free(e->v);
  e->v = NULL;
  e->n = e->cap = 0;
}

typedef struct {
  sg_validation_errors *errs;
  long added;
  bool oom;
} reporter;

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static void report(reporter *r, const char *item_id, const char *path, const char *reason,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void report(reporter *r, const char *item_id, const char *path, const char *reason,
                   const char *fmt, ...) {
  if (r->oom || r->errs->n >= MAX_ERRORS) return;
  sg_validation_errors *e = r->errs;
  if (e->n == e->cap) {
    size_t nc = e->cap ? e->cap * 2 : 16;
    sg_validation_error *p = realloc(e->v, nc * sizeof *p);
    if (!p) {
      r->oom = true;
      return;
    }
    e->v = p;
    e->cap = nc;
  }
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  sg_validation_error *x = &e->v[e->n];
  x->item_id = dup_or_null(item_id);
  x->path = strdup(path);
  x->reason = strdup(reason);
  x->message = strdup(msg);
  if ((item_id && !x->item_id) || !x->path || !x->reason || !x->message) {
    free(x->item_id);
    free(x->path);
    free(x->reason);
    free(x->message);
    r->oom = true;
    return;
  }
  e->n++;
  r->added++;
}

static int cmp_ptr_id(const void *a, const void *b) {
  const sg_compile_item *x = *(const sg_compile_item *const *)a;
  const sg_compile_item *y = *(const sg_compile_item *const *)b;
  return strcmp(x->id, y->id);
}

/* Value order, ties by position (= id order): the first of a run of equal values is the
 * one kept, the others are duplicates. */
static int cmp_idx_value(const void *a, const void *b, void *ctx) {
  const sg_compile_item *const *sorted = ctx;
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  int c = strcmp(sorted[x]->value, sorted[y]->value);
  if (c) return c;
  return x < y ? -1 : x > y;
}

static bool text_ok(const char *s) { return s && sg_utf8_valid(s, strlen(s)); }

static bool item_texts_ok(const sg_compile_item *it, const char **bad) {
  if (!text_ok(it->value)) {
    *bad = "value";
    return false;
  }
  if (it->display_value && !text_ok(it->display_value)) {
    *bad = "displayValue";
    return false;
  }
  if (it->description && !text_ok(it->description)) {
    *bad = "description";
    return false;
  }
  for (size_t a = 0; a < it->n_aliases; a++)
    if (!text_ok(it->aliases[a])) {
      *bad = "aliases";
      return false;
    }
  for (size_t l = 0; l < it->n_locales; l++) {
    const sg_item_locale *loc = &it->locales[l];
    if ((loc->display_value && !text_ok(loc->display_value)) ||
        (loc->description && !text_ok(loc->description))) {
      *bad = "locales";
      return false;
    }
    for (size_t a = 0; a < loc->n_aliases; a++)
      if (!text_ok(loc->aliases[a])) {
        *bad = "locales";
        return false;
      }
  }
  return true;
}

static bool locale_supported(const sg_compile_opts *o, const char *tag) {
  for (size_t i = 0; i < o->n_supported; i++)
    if (tag && strcasecmp(o->supported_locales[i], tag) == 0) return true;
  return false;
}

long sg_validate(const sg_compile_item *items, size_t n, const sg_compile_opts *opts,
                 sg_validation_errors *errs) {
  reporter r = {errs, 0, false};
  const sg_compile_item **s = malloc((n ? n : 1) * sizeof *s);
  uint32_t *byval = malloc((n ? n : 1) * sizeof *byval);
  uint32_t *parent = malloc((n ? n : 1) * sizeof *parent);
  uint32_t *dup_of = malloc((n ? n : 1) * sizeof *dup_of);
  uint32_t *depth = malloc((n ? n : 1) * sizeof *depth);
  uint32_t *pos = malloc((n ? n : 1) * sizeof *pos);
  uint32_t *path = malloc((n ? n : 1) * sizeof *path);
  unsigned char *state = calloc(n ? n : 1, 1); /* 0 new, 1 on path, 2 done */
  bool *cyc = calloc(n ? n : 1, sizeof *cyc);
  long ret = -1;
  if (!s || !byval || !parent || !dup_of || !depth || !pos || !path || !state || !cyc) goto done;

  /* Items without an id or a value cannot be checked further. */
  for (size_t i = 0; i < n; i++)
    if (!items[i].id || !items[i].value)
      report(&r, items[i].id, items[i].id ? "value" : "id", "missing_field",
             "every item needs an id and a value");
  if (r.added) {
    ret = r.oom ? -1 : r.added;
    goto done;
  }

  if (opts && opts->max_items && n > opts->max_items)
    report(&r, NULL, "items", "too_many_items", "the list has %zu items; the limit is %zu", n,
           opts->max_items);

  for (size_t i = 0; i < n; i++) s[i] = &items[i];
  qsort(s, n, sizeof *s, cmp_ptr_id);

  /* Duplicate values (exact bytes). */
  for (uint32_t i = 0; i < n; i++) {
    byval[i] = i;
    dup_of[i] = NO_PARENT;
  }
  qsort_r(byval, n, sizeof *byval, cmp_idx_value, s);
  for (size_t i = 1; i < n; i++) {
    uint32_t prev = byval[i - 1], cur = byval[i];
    if (strcmp(s[prev]->value, s[cur]->value) == 0)
      dup_of[cur] = dup_of[prev] != NO_PARENT ? dup_of[prev] : prev;
  }

  /* Parents: index by binary search on the id-sorted array. */
  for (size_t i = 0; i < n; i++) {
    parent[i] = NO_PARENT;
    if (!s[i]->parent_id) continue;
    size_t lo = 0, hi = n;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      int c = strcmp(s[mid]->id, s[i]->parent_id);
      if (c == 0) {
        parent[i] = (uint32_t)mid;
        break;
      }
      if (c < 0)
        lo = mid + 1;
      else
        hi = mid;
    }
  }

  /* Depth (levels, a root is 1) and cycles, iteratively: walk up until a finished item,
   * a root or an item already on the current path (a cycle), then unwind. */
  for (uint32_t i = 0; i < n; i++) {
    if (state[i]) continue;
    size_t np = 0;
    uint32_t j = i;
    while (j != NO_PARENT && state[j] == 0) {
      state[j] = 1;
      pos[j] = (uint32_t)np;
      path[np++] = j;
      j = parent[j];
    }
    uint32_t base = 0;
    bool base_cyc = false;
    size_t stop = np;
    if (j != NO_PARENT && state[j] == 1) {
      /* path[pos[j]..np) is a cycle. */
      for (size_t k = pos[j]; k < np; k++) {
        cyc[path[k]] = true;
        depth[path[k]] = UINT32_MAX;
        state[path[k]] = 2;
      }
      stop = pos[j];
      base_cyc = true;
      base = UINT32_MAX;
    } else if (j != NO_PARENT) {
      base = depth[j];
      base_cyc = cyc[j];
    }
    for (size_t k = stop; k-- > 0;) {
      uint32_t x = path[k];
      depth[x] = base == UINT32_MAX ? UINT32_MAX : base + 1;
      cyc[x] = base_cyc;
      state[x] = 2;
      base = depth[x];
    }
  }

  for (size_t i = 0; i < n && !r.oom; i++) {
    const sg_compile_item *it = s[i];
    if (i > 0 && strcmp(s[i - 1]->id, it->id) == 0)
      report(&r, it->id, "id", "duplicate_id", "the id %s is used by more than one item", it->id);
    const char *bad;
    if (!item_texts_ok(it, &bad))
      report(&r, it->id, bad, "invalid_text", "%s is not valid UTF-8 text", bad);
    if (dup_of[i] != NO_PARENT)
      report(&r, it->id, "value", "duplicate_value", "the value is already used by item %s",
             s[dup_of[i]]->id);
    for (size_t l = 0; l < it->n_locales; l++)
      if (!locale_supported(opts, it->locales[l].locale)) {
        char p[96];
        snprintf(p, sizeof p, "locales.%.80s", it->locales[l].locale ? it->locales[l].locale : "");
        report(&r, it->id, p, "unsupported_locale", "locale %.80s is not in supportedLocales",
               it->locales[l].locale ? it->locales[l].locale : "");
      }
    if (it->parent_id && parent[i] == NO_PARENT)
      report(&r, it->id, "parentId", "unknown_parent", "parent %.200s is not an item of the list",
             it->parent_id);
    else if (cyc[i])
      report(&r, it->id, "parentId", "parent_cycle", "the chain of parents loops");
    else if (depth[i] > SG_MAX_HIERARCHY_DEPTH)
      report(&r, it->id, "parentId", "hierarchy_too_deep",
             "the item is %u levels deep; at most %d are allowed", depth[i],
             SG_MAX_HIERARCHY_DEPTH);
  }
  ret = r.oom ? -1 : r.added;
done:
  free(s);
  free(byval);
  free(parent);
  free(dup_of);
  free(depth);
  free(pos);
  free(path);
  free(state);
  free(cyc);
  return ret;
}
