/*
 * `suggestd compile` and `suggestd inspect` (usage in cli.h).
 */
#include "compiler/cli.h"
#include "compiler/typo.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <strings.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/args.h"
#include "common/arena.h"
#include "common/buf.h"
#include "common/util.h"
#include "compiler/compiler.h"
#include "compiler/normalize.h"
#include "search/artifact.h"

/* ---- output -------------------------------------------------------------------------- */

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  json_t *o = json_pack("{s:s}", "error", msg);
  char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
  fprintf(stderr, "%s\n", s ? s : "{\"error\":\"out of memory\"}");
  free(s);
  json_decref(o);
  return 1;
}

static int print_json(json_t *o) {
  char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
  json_decref(o);
  if (!s) return fail("out of memory");
  printf("%s\n", s);
  free(s);
  return 0;
}

/* ---- JSONL items ------------------------------------------------------------------------ */

/* Reads a JSON array of strings into the arena. Returns 0, or -1 with err set. */
static int read_aliases(sg_arena *ar, json_t *v, const char *const **out, size_t *n, char *err,
                        size_t errsz) {
  if (!json_is_array(v)) {
    snprintf(err, errsz, "aliases must be an array of strings");
    return -1;
  }
  size_t k = json_array_size(v);
  const char **a = sg_arena_alloc(ar, (k ? k : 1) * sizeof *a);
  if (!a) {
    snprintf(err, errsz, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < k; i++) {
    json_t *s = json_array_get(v, i);
    if (!json_is_string(s)) {
      snprintf(err, errsz, "aliases must be an array of strings");
      return -1;
    }
    if (!(a[i] = sg_arena_strndup(ar, json_string_value(s), json_string_length(s)))) {
      snprintf(err, errsz, "out of memory");
      return -1;
    }
  }
  *out = a;
  *n = k;
  return 0;
}

static const char *opt_str(sg_arena *ar, json_t *o, const char *key, int *bad) {
  json_t *v = json_object_get(o, key);
  if (!v || json_is_null(v)) return NULL;
  if (!json_is_string(v)) {
    *bad = 1;
    return NULL;
  }
  const char *s = sg_arena_strndup(ar, json_string_value(v), json_string_length(v));
  if (!s) *bad = 1;
  return s;
}

static int parse_item(sg_arena *ar, json_t *o, size_t line, sg_compile_item *it, char *err,
                      size_t errsz) {
  static const char *const known[] = {"id",   "value",    "displayValue", "description", "aliases",
                                      "rank", "parentId", "locales",      NULL};
  if (!json_is_object(o)) {
    snprintf(err, errsz, "not a JSON object");
    return -1;
  }
  const char *key;
  json_t *v;
  json_object_foreach(o, key, v) {
    size_t k = 0;
    while (known[k] && strcmp(known[k], key) != 0) k++;
    if (!known[k]) {
      snprintf(err, errsz, "unknown field %.100s", key);
      return -1;
    }
  }
  memset(it, 0, sizeof *it);
  int bad = 0;
  it->id = opt_str(ar, o, "id", &bad);
  it->value = opt_str(ar, o, "value", &bad);
  it->display_value = opt_str(ar, o, "displayValue", &bad);
  it->parent_id = opt_str(ar, o, "parentId", &bad);
  it->description = opt_str(ar, o, "description", &bad);
  if (bad) {
    snprintf(err, errsz, "id, value, displayValue, description and parentId must be strings");
    return -1;
  }
  if (!it->value) {
    snprintf(err, errsz, "value is required");
    return -1;
  }
  if (!it->id) {
    char id[32];
    int n = snprintf(id, sizeof id, "itm_%zu", line);
    if (!(it->id = sg_arena_strndup(ar, id, (size_t)n))) {
      snprintf(err, errsz, "out of memory");
      return -1;
    }
  }
  if (!it->display_value) it->display_value = it->value;
  if ((v = json_object_get(o, "aliases")) && !json_is_null(v) &&
      read_aliases(ar, v, &it->aliases, &it->n_aliases, err, errsz))
    return -1;
  if ((v = json_object_get(o, "rank")) && !json_is_null(v)) {
    if (!json_is_integer(v)) {
      snprintf(err, errsz, "rank must be an integer");
      return -1;
    }
    it->rank = json_integer_value(v);
  }
  if ((v = json_object_get(o, "locales")) && !json_is_null(v)) {
    if (!json_is_object(v)) {
      snprintf(err, errsz, "locales must be an object");
      return -1;
    }
    size_t k = json_object_size(v), i = 0;
    sg_item_locale *ls = sg_arena_alloc(ar, (k ? k : 1) * sizeof *ls);
    if (!ls) {
      snprintf(err, errsz, "out of memory");
      return -1;
    }
    const char *tag;
    json_t *lv;
    json_object_foreach(v, tag, lv) {
      if (!json_is_object(lv)) {
        snprintf(err, errsz, "locales.%.40s must be an object", tag);
        return -1;
      }
      sg_item_locale *l = &ls[i++];
      memset(l, 0, sizeof *l);
      l->locale = sg_arena_strndup(ar, tag, strlen(tag));
      l->display_value = opt_str(ar, lv, "displayValue", &bad);
      l->description = opt_str(ar, lv, "description", &bad);
      json_t *al = json_object_get(lv, "aliases");
      if (bad || !l->locale) {
        snprintf(err, errsz, "locales.%.40s.displayValue and description must be strings", tag);
        return -1;
      }
      if (al && !json_is_null(al) && read_aliases(ar, al, &l->aliases, &l->n_aliases, err, errsz))
        return -1;
    }
    it->locales = ls;
    it->n_locales = i;
  }
  return 0;
}

typedef struct {
  sg_compile_item *v;
  size_t n, cap;
} item_vec;

static int read_jsonl(const char *path, sg_arena *ar, item_vec *items, char *err, size_t errsz) {
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
  if (!f) {
    snprintf(err, errsz, "cannot open %s: %s", path, strerror(errno));
    return -1;
  }
  char *line = NULL;
  size_t lcap = 0, lineno = 0;
  ssize_t len;
  int rc = 0;
  while ((len = getline(&line, &lcap, f)) >= 0) {
    lineno++;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) len--;
    size_t sp = 0;
    while (sp < (size_t)len && (line[sp] == ' ' || line[sp] == '\t')) sp++;
    if (sp == (size_t)len) continue; /* blank lines are allowed */
    json_error_t je;
    json_t *o = json_loadb(line, (size_t)len, JSON_REJECT_DUPLICATES, &je);
    if (!o) {
      snprintf(err, errsz, "line %zu: %s", lineno, je.text);
      rc = -1;
      break;
    }
    if (items->n == items->cap) {
      size_t nc = items->cap ? items->cap * 2 : 1024;
      sg_compile_item *p = realloc(items->v, nc * sizeof *p);
      if (!p) {
        json_decref(o);
        snprintf(err, errsz, "out of memory");
        rc = -1;
        break;
      }
      items->v = p;
      items->cap = nc;
    }
    char ierr[256];
    if (parse_item(ar, o, lineno, &items->v[items->n], ierr, sizeof ierr)) {
      snprintf(err, errsz, "line %zu: %s", lineno, ierr);
      json_decref(o);
      rc = -1;
      break;
    }
    items->n++;
    json_decref(o);
  }
  free(line);
  if (f != stdin) fclose(f);
  return rc;
}

/* ---- compile ------------------------------------------------------------------------------ */

static const sg_flag_spec compile_flags[] = {
    {"input", true, false},
    {"output", true, false},
    {"default-locale", true, false},
    {"locales", true, false},
    {"max-items", true, false},
    {"without-words", false, false},
    {"without-skip-tables", false, false},
    {NULL, false, false},
};

int sg_cmd_compile(int argc, char **argv) {
  sg_args a;
  char err[512];
  if (sg_args_parse(&a, argc, argv, compile_flags, err, sizeof err)) return fail("%s", err);
  if (a.npos) return fail("compile takes no positional arguments");
  const char *input = sg_args_get(&a, "input"), *output = sg_args_get(&a, "output");
  if (!input || !output) return fail("compile needs --input FILE and --output FILE");
  const char *def = sg_args_get_or(&a, "default-locale", "en");
  int64_t max_items = 0;
  const char *mi = sg_args_get(&a, "max-items");
  if (mi && sg_parse_i64(mi, 0, INT64_MAX, &max_items)) return fail("--max-items must be a number");

  /* Supported locales: --locales, comma separated; the default is always one of them. */
  char locbuf[1024];
  snprintf(locbuf, sizeof locbuf, "%s", sg_args_get_or(&a, "locales", def));
  const char *locs[64];
  size_t nloc = 0;
  bool has_def = false;
  for (char *save = NULL, *t = strtok_r(locbuf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    while (*t == ' ') t++;
    if (!*t) continue;
    if (nloc == 63) return fail("too many locales");
    for (size_t i = 0; i < nloc; i++)
      if (strcasecmp(locs[i], t) == 0) return fail("locale %s given twice", t);
    locs[nloc++] = t;
    if (strcasecmp(t, def) == 0) has_def = true;
  }
  if (!has_def) {
    memmove(locs + 1, locs, nloc * sizeof *locs);
    locs[0] = def;
    nloc++;
  }
  sg_compile_opts opts = {def, locs, nloc, (size_t)max_items};
  unsigned leave_out = (sg_args_has(&a, "without-words") ? SG_LEAVE_OUT_WORDS : 0u) |
                       (sg_args_has(&a, "without-skip-tables") ? SG_LEAVE_OUT_SKIP : 0u);

  sg_arena ar = SG_ARENA_INIT;
  item_vec items = {0};
  sg_buf out;
  sg_buf_init(&out, 0);
  sg_validation_errors verrs = {0};
  int rc = 1;
  if (read_jsonl(input, &ar, &items, err, sizeof err)) {
    rc = fail("%s", err);
    goto done;
  }
  long nerr = sg_validate(items.v, items.n, &opts, &verrs);
  if (nerr < 0) {
    rc = fail("out of memory");
    goto done;
  }
  if (nerr > 0) {
    json_t *arr = json_array();
    for (size_t i = 0; i < verrs.n && i < 100; i++) {
      const sg_validation_error *e = &verrs.v[i];
      json_array_append_new(arr, json_pack("{s:s?,s:s,s:s,s:s}", "itemId", e->item_id, "path",
                                           e->path, "reason", e->reason, "message", e->message));
    }
    json_t *o = json_pack("{s:s,s:I,s:o}", "error", "validation failed", "errorCount",
                          (json_int_t)verrs.n, "validationErrors", arr);
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    fprintf(stderr, "%s\n", s ? s : "{\"error\":\"validation failed\"}");
    free(s);
    json_decref(o);
    goto done;
  }
  if (sg_compile_leaving_out(items.v, items.n, &opts, leave_out, &out)) {
    rc = fail("compilation failed");
    goto done;
  }
  if (sg_write_file_atomic(output, out.data, out.len)) {
    rc = fail("cannot write %s: %s", output, strerror(errno));
    goto done;
  }
  char hash[72];
  sg_sha256_tagged(out.data, out.len, hash);
  rc = print_json(json_pack("{s:s,s:I,s:I}", "contentHash", hash, "itemCount", (json_int_t)items.n,
                            "bytes", (json_int_t)out.len));
done:
  sg_validation_errors_free(&verrs);
  sg_buf_free(&out);
  free(items.v);
  sg_arena_free(&ar);
  return rc;
}

/* ---- inspect ------------------------------------------------------------------------------- */

static const sg_flag_spec inspect_flags[] = {
    {"query", true, false},
    {"locale", true, false},
    {"typo-tolerance", true, false},
    {NULL, false, false},
};

/* --typo-tolerance: "default" (docs/DESIGN.md §3.1: 4 and 8), "off", or "MIN1,MIN2" with
 * 1 <= MIN1 <= MIN2 <= 255, as a list's queryPolicy.typoTolerance would say. The policy is
 * the list's, not the artifact's, so inspect has to be told it to answer as the runtime. */
static int typo_flag(const char *v, sg_typo_policy *p) {
  *p = SG_TYPO_POLICY_DEFAULT;
  if (!v || strcmp(v, "default") == 0) return 0;
  if (strcmp(v, "off") == 0) {
    p->enabled = 0;
    return 0;
  }
  unsigned a, b;
  char tail;
  if (sscanf(v, "%3u,%3u%c", &a, &b, &tail) != 2 || a < 1 || a > b || b > 255) return -1;
  p->min_one = (int)a;
  p->min_two = (int)b;
  return 0;
}

int sg_cmd_inspect(int argc, char **argv) {
  sg_args a;
  char err[512];
  if (sg_args_parse(&a, argc, argv, inspect_flags, err, sizeof err)) return fail("%s", err);
  if (a.npos != 1)
    return fail("usage: suggestd inspect FILE [--query Q] [--locale L] "
                "[--typo-tolerance default|off|MIN1,MIN2]");
  sg_typo_policy typo;
  if (typo_flag(sg_args_get(&a, "typo-tolerance"), &typo))
    return fail(
        "--typo-tolerance must be default, off, or MIN1,MIN2 with 1 <= MIN1 <= MIN2 <= 255");
  const char *path = a.pos[0];
  char *data;
  size_t len;
  if (sg_read_file(path, SIZE_MAX / 2, &data, &len))
    return fail("cannot read %s: %s", path, strerror(errno));
  sg_artifact *art;
  if (sg_artifact_open_mem(data, len, &art)) {
    free(data);
    return fail("%s is not a valid artifact", path);
  }
  int rc;
  const char *q = sg_args_get(&a, "query");
  if (q) {
    const char *tag;
    int loc = sg_artifact_resolve_locale(art, sg_args_get(&a, "locale"), &tag);
    char nq[2048];
    long nl = sg_normalize_into(q, strlen(q), nq, sizeof nq);
    if (nl < 0) {
      rc = fail("the query is not valid UTF-8 or is too long");
    } else {
      sg_query_result res;
      unsigned k = sg_typo_budget(&typo, sg_utf8_count(nq, (size_t)nl));
      sg_artifact_query_k(art, loc, nq, (size_t)nl, k, &res);
      sg_buf b;
      sg_buf_init(&b, 0);
      sg_buf_putc(&b, '[');
      for (size_t i = 0; i < res.n; i++) {
        if (i) sg_buf_putc(&b, ',');
        sg_buf_append(&b, res.items[i].json, res.items[i].len);
      }
      sg_buf_putc(&b, ']');
      rc = b.data ? (printf("%s\n", b.data), 0) : fail("out of memory");
      sg_buf_free(&b);
    }
  } else {
    char hash[72];
    sg_sha256_tagged(data, len, hash);
    json_t *locs = json_array();
    for (size_t l = 0; l < sg_artifact_locale_count(art); l++) {
      size_t keys, buckets, t;
      sg_artifact_locale_stats(art, (int)l, &keys, &buckets, &t);
      json_array_append_new(locs,
                            json_pack("{s:s,s:I,s:I}", "tag", sg_artifact_locale_tag(art, (int)l),
                                      "keys", (json_int_t)keys, "buckets", (json_int_t)buckets));
    }
    size_t keys, buckets, t;
    sg_artifact_locale_stats(art, 0, &keys, &buckets, &t);
    rc = print_json(json_pack("{s:I,s:s,s:I,s:I,s:s,s:I,s:o}", "formatVersion",
                              (json_int_t)sg_artifact_format(art), "contentHash", hash, "bytes",
                              (json_int_t)len, "itemCount", (json_int_t)sg_artifact_item_count(art),
                              "defaultLocale", sg_artifact_default_locale(art), "bucketThreshold",
                              (json_int_t)t, "locales", locs));
  }
  sg_artifact_close(art);
  free(data);
  return rc;
}
