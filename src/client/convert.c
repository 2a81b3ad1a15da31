/*
 * Import file formats → NDJSON (see convert.h).
 */
#include "client/convert.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/util.h"

/* JSON splitter states. */
enum { J_BEFORE, J_EXPECT, J_ELEM, J_AFTER_COMMA, J_DONE };
/* CSV states: at the start of a field, inside an unquoted one, inside quotes, just after a
 * quote inside quotes (either the closing one or the first of ""). */
enum { C_START, C_PLAIN, C_QUOTED, C_QUOTE };
/* Item fields a CSV column can map to, in sg_csv_map order. */
enum { F_VALUE, F_DISPLAY, F_RANK, F_ALIASES, F_PARENT, F_ORDER, F_DESC, F_COUNT };
static const char *const field_names[F_COUNT] = {
    "value", "displayValue", "rank", "aliases", "parentValue", "displayOrder", "description"};

/* Records the first problem as "line N: what"; returns -1. */
static int fail(sg_convert *c, int64_t line, const char *what) {
  if (!c->err[0]) snprintf(c->err, sizeof c->err, "line %lld: %s", (long long)line, what);
  return -1;
}

sg_import_format sg_convert_detect(const char *path, const char *head, size_t n) {
  const char *dot = path ? strrchr(path, '.') : NULL;
  if (dot && (!strcasecmp(dot, ".ndjson") || !strcasecmp(dot, ".jsonl"))) return SG_FMT_NDJSON;
  if (dot && (!strcasecmp(dot, ".csv") || !strcasecmp(dot, ".tsv"))) return SG_FMT_CSV;
  size_t i = 0;
  if (n >= 3 && memcmp(head, "\xEF\xBB\xBF", 3) == 0) i = 3;
  while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n')) i++;
  if (i < n && head[i] == '[') return SG_FMT_JSON;
  if (i < n && head[i] == '{') return SG_FMT_NDJSON;
  if (dot && !strcasecmp(dot, ".json")) return SG_FMT_JSON;
  return SG_FMT_CSV;
}

int sg_convert_parse_format(const char *s, sg_import_format *out, char *delimiter) {
  if (!strcmp(s, "ndjson") || !strcmp(s, "jsonl"))
    *out = SG_FMT_NDJSON;
  else if (!strcmp(s, "json"))
    *out = SG_FMT_JSON;
  else if (!strcmp(s, "csv"))
    *out = SG_FMT_CSV;
  else if (!strcmp(s, "tsv")) {
    *out = SG_FMT_CSV;
    if (delimiter) *delimiter = '\t';
  } else
    return -1;
  return 0;
}

void sg_convert_init(sg_convert *c, sg_import_format fmt, const sg_csv_map *map) {
  memset(c, 0, sizeof *c);
  c->fmt = fmt;
  if (map) c->map = *map;
  if (!c->map.delimiter) c->map.delimiter = ',';
  if (!c->map.aliases_split) c->map.aliases_split = '|';
  c->line = 1;
  sg_buf_init(&c->field, SG_CONVERT_MAX_RECORD);
  for (int i = 0; i < F_COUNT; i++) c->col[i] = -1;
}

static void free_strs(char **v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i]);
}

void sg_convert_free(sg_convert *c) {
  sg_buf_free(&c->field);
  free_strs(c->fields, c->nfields);
  free(c->fields);
  free_strs(c->header, c->nheader);
  free(c->header);
  free(c->runs);
  memset(c, 0, sizeof *c);
}

/* Records that the next NDJSON line starts at input line `line`. */
static int note_line(sg_convert *c, int64_t line) {
  int64_t index = c->nlines++;
  if (c->mapped < index) return 0; /* past the cap: unknown from here on */
  const sg_convert_run *last = c->nruns ? &c->runs[c->nruns - 1] : NULL;
  if (!last || last->line + (index - last->index) != line) {
    if (c->nruns == SG_CONVERT_MAX_RUNS) return 0;
    if (c->nruns == c->capruns) {
      size_t cap = c->capruns ? c->capruns * 2 : 64;
      sg_convert_run *p = realloc(c->runs, cap * sizeof *p);
      if (!p) return fail(c, line, "out of memory");
      c->runs = p;
      c->capruns = cap;
    }
    c->runs[c->nruns++] = (sg_convert_run){index, line};
  }
  c->mapped = index + 1;
  return 0;
}

int64_t sg_convert_source_line(const sg_convert *c, int64_t index) {
  if (index < 0) return 0;
  if (c->fmt == SG_FMT_NDJSON) return index + 1;
  if (index >= c->mapped) return 0;
  /* The last run that starts at or before index. */
  size_t lo = 0, hi = c->nruns;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (c->runs[mid].index <= index)
      lo = mid;
    else
      hi = mid;
  }
  return c->runs[lo].line + (index - c->runs[lo].index);
}

/* ---- JSON array ------------------------------------------------------------------------- */

static bool ws(char ch) { return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n'; }

static int json_byte(sg_convert *c, char ch, sg_buf *out) {
  switch (c->state) {
  case J_BEFORE:
    if (ws(ch)) return 0;
    if (ch != '[') return fail(c, c->line, "a JSON import must be an array of items: [{...}, ...]");
    c->state = J_EXPECT;
    return 0;
  case J_EXPECT:
  case J_AFTER_COMMA:
    if (ws(ch)) return 0;
    if (ch == ']') {
      if (c->state == J_AFTER_COMMA) return fail(c, c->line, "a comma before ] in the JSON array");
      c->state = J_DONE;
      return 0;
    }
    if (ch == ',') return fail(c, c->line, "an empty element in the JSON array");
    if (note_line(c, c->line)) return -1;
    c->state = J_ELEM;
    c->depth = 0;
    c->in_str = c->esc = false;
    c->elem_bytes = 0;
    break; /* the byte starts the element */
  case J_DONE:
    if (ws(ch)) return 0;
    return fail(c, c->line, "data after the end of the JSON array");
  default: break;
  }
  /* J_ELEM: copy the element, ending it at a comma or ] outside any string or nesting. */
  if (++c->elem_bytes > SG_CONVERT_MAX_RECORD)
    return fail(c, c->line, "an element of the JSON array is over 1 MiB");
  if (c->in_str) {
    if (ch == '\n') return fail(c, c->line, "a line break inside a JSON string");
    if (c->esc)
      c->esc = false;
    else if (ch == '\\')
      c->esc = true;
    else if (ch == '"')
      c->in_str = false;
    return sg_buf_putc(out, ch);
  }
  if (ch == '"')
    c->in_str = true;
  else if (ch == '{' || ch == '[') {
    if (++c->depth > 1000) return fail(c, c->line, "JSON nested too deeply");
  } else if (ch == '}' || ch == ']') {
    if (c->depth == 0) {
      if (ch == '}') return fail(c, c->line, "an unbalanced } in the JSON array");
      c->state = J_DONE;
      return sg_buf_putc(out, '\n');
    }
    c->depth--;
  } else if (ch == ',' && c->depth == 0) {
    c->state = J_AFTER_COMMA;
    return sg_buf_putc(out, '\n');
  } else if (ch == '\n' || ch == '\r') {
    ch = ' '; /* one element, one NDJSON line */
  }
  return sg_buf_putc(out, ch);
}

/* ---- CSV -------------------------------------------------------------------------------- */

static int push_field(sg_convert *c) {
  if (c->nfields == c->capfields) {
    size_t cap = c->capfields ? c->capfields * 2 : 16;
    if (cap > 4096) return fail(c, c->record_line, "more than 4096 columns");
    char **p = realloc(c->fields, cap * sizeof *p);
    if (!p) return fail(c, c->record_line, "out of memory");
    c->fields = p;
    c->capfields = cap;
  }
  char *s = malloc(c->field.len + 1);
  if (!s) return fail(c, c->record_line, "out of memory");
  if (c->field.len) memcpy(s, c->field.data, c->field.len);
  s[c->field.len] = '\0';
  c->fields[c->nfields++] = s;
  sg_buf_reset(&c->field);
  return 0;
}

/* The header row: finds the column of each item field. */
static int take_header(sg_convert *c) {
  c->header = c->fields;
  c->nheader = c->nfields;
  c->fields = NULL;
  c->nfields = c->capfields = 0;
  const char *want[F_COUNT] = {c->map.value,      c->map.display_value, c->map.rank,
                               c->map.aliases,    c->map.parent_value,  c->map.display_order,
                               c->map.description};
  for (int f = 0; f < F_COUNT; f++) {
    const char *name = want[f] ? want[f] : field_names[f];
    for (size_t i = 0; i < c->nheader; i++)
      if (strcmp(c->header[i], name) == 0) {
        c->col[f] = (int)i;
        break;
      }
    if (want[f] && c->col[f] < 0) {
      snprintf(c->err, sizeof c->err, "line %lld: the CSV header has no column '%.60s'",
               (long long)c->record_line, name);
      return -1;
    }
  }
  if (c->col[F_VALUE] < 0) {
    snprintf(c->err, sizeof c->err,
             "line %lld: the CSV header has no 'value' column; name the column that holds "
             "the values with --value-column",
             (long long)c->record_line);
    return -1;
  }
  return 0;
}

/* A cell that is an integer goes as a number; anything else as the string, so the server
 * names the field and the reason. */
static json_t *int_or_string(const char *s) {
  int64_t v;
  if (sg_parse_i64(s, INT64_MIN, INT64_MAX, &v) == 0) return json_integer((json_int_t)v);
  return json_string(s);
}

static int emit_record(sg_convert *c, sg_buf *out) {
  if (c->nfields == 1 && !c->fields[0][0]) return 0; /* a blank line */
  if (!c->header) return take_header(c);
  if (c->nfields != c->nheader) {
    snprintf(c->err, sizeof c->err, "line %lld: %zu fields, but the header has %zu",
             (long long)c->record_line, c->nfields, c->nheader);
    return -1;
  }
  json_t *o = json_object();
  for (int f = 0; f < F_COUNT; f++) {
    if (c->col[f] < 0) continue;
    const char *cell = c->fields[c->col[f]];
    if (!*cell) continue; /* an empty cell takes the field's default */
    json_t *v;
    if (f == F_RANK || f == F_ORDER) {
      v = int_or_string(cell);
    } else if (f == F_ALIASES) {
      v = json_array();
      for (const char *p = cell;;) {
        const char *e = strchr(p, c->map.aliases_split);
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n) json_array_append_new(v, json_stringn_nocheck(p, n));
        if (!e) break;
        p = e + 1;
      }
    } else {
      v = json_string_nocheck(cell);
    }
    json_object_set_new(o, field_names[f], v);
  }
  /* Invalid UTF-8 is sent as it is: the server rejects the line and names it. */
  char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(o);
  if (!s) return fail(c, c->record_line, "a cell is not valid UTF-8");
  int rc = note_line(c, c->record_line) || sg_buf_puts(out, s) || sg_buf_putc(out, '\n');
  free(s);
  return rc ? -1 : 0;
}

static int end_record(sg_convert *c, sg_buf *out) {
  int rc = push_field(c) || emit_record(c, out);
  free_strs(c->fields, c->nfields);
  c->nfields = 0;
  c->elem_bytes = 0;
  return rc ? -1 : 0;
}

static int csv_byte(sg_convert *c, char ch, sg_buf *out) {
  if (c->state == C_START && c->nfields == 0 && c->field.len == 0) c->record_line = c->line;
  if (++c->elem_bytes > SG_CONVERT_MAX_RECORD)
    return fail(c, c->record_line, "a CSV record over 1 MiB");
  char d = c->map.delimiter;
  switch (c->state) {
  case C_QUOTED:
    if (ch == '"')
      c->state = C_QUOTE;
    else if (sg_buf_putc(&c->field, ch))
      return fail(c, c->line, "out of memory");
    return 0;
  case C_QUOTE:
    if (ch == '"') { /* "" inside quotes */
      c->state = C_QUOTED;
      return sg_buf_putc(&c->field, '"');
    }
    if (ch != d && ch != '\n' && ch != '\r')
      return fail(c, c->line,
                  "text after a closing quote (write \"\" for a quote inside a quoted field)");
    break; /* the closing quote: handle ch as after any field */
  case C_START:
    if (ch == '"') {
      c->state = C_QUOTED;
      return 0;
    }
    break;
  default: break;
  }
  if (ch == d) {
    c->state = C_START;
    return push_field(c);
  }
  if (ch == '\r') return 0; /* CRLF */
  if (ch == '\n') {
    c->state = C_START;
    return end_record(c, out);
  }
  if (c->state == C_PLAIN || c->state == C_START) {
    if (ch == '"' && c->state == C_PLAIN)
      return fail(c, c->line, "a quote inside an unquoted field (quote the whole field)");
    c->state = C_PLAIN;
    return sg_buf_putc(&c->field, ch);
  }
  return 0;
}

/* ---- driver ------------------------------------------------------------------------------ */

int sg_convert_feed(sg_convert *c, const char *data, size_t n, sg_buf *out) {
  if (c->err[0]) return -1;
  if (c->fmt == SG_FMT_NDJSON) {
    if (sg_buf_append(out, data, n)) return fail(c, c->line, "out of memory");
    return 0;
  }
  size_t i = 0;
  if (!c->bom_checked) {
    /* A UTF-8 byte order mark (spreadsheets write one) is not part of the data. It is
     * only recognised when the first read holds all three bytes, as any real read does. */
    c->bom_checked = true;
    if (n >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) i = 3;
  }
  for (; i < n; i++) {
    int rc = c->fmt == SG_FMT_JSON ? json_byte(c, data[i], out) : csv_byte(c, data[i], out);
    if (rc) {
      if (!c->err[0]) fail(c, c->line, "out of memory");
      return -1;
    }
    if (data[i] == '\n') c->line++;
  }
  return 0;
}

int sg_convert_finish(sg_convert *c, sg_buf *out) {
  if (c->err[0]) return -1;
  if (c->fmt == SG_FMT_JSON) {
    if (c->state == J_BEFORE) return fail(c, c->line, "the file is empty, not a JSON array");
    if (c->state != J_DONE) return fail(c, c->line, "the JSON array is not closed with ]");
  } else if (c->fmt == SG_FMT_CSV) {
    if (c->state == C_QUOTED) return fail(c, c->record_line, "a quoted CSV field is never closed");
    if (c->state != C_START || c->nfields || c->field.len) {
      if (end_record(c, out)) return -1;
    }
    if (!c->header) return fail(c, c->line, "the CSV file has no header row");
  }
  return 0;
}

void sg_convert_unused_columns(const sg_convert *c, char *out, size_t outsz) {
  size_t at = 0;
  out[0] = '\0';
  for (size_t i = 0; i < c->nheader; i++) {
    bool used = false;
    for (int f = 0; f < F_COUNT; f++) used = used || c->col[f] == (int)i;
    if (used) continue;
    int n = snprintf(out + at, outsz - at, "%s%s", at ? ", " : "", c->header[i]);
    if (n < 0 || (size_t)n >= outsz - at) break;
    at += (size_t)n;
  }
}

/* "line N" of the input, or "item N" when the line is not known (past the map's cap). */
static void where(const sg_convert *c, int64_t index, char *out, size_t outsz) {
  int64_t line = sg_convert_source_line(c, index);
  if (line > 0)
    snprintf(out, outsz, "line %lld", (long long)line);
  else
    snprintf(out, outsz, "item %lld", (long long)(index < 0 ? 0 : index + 1));
}

json_t *sg_convert_problems(const sg_convert *c, const json_t *details) {
  json_t *out = json_array();
  size_t i;
  json_t *e;
  json_array_foreach(json_object_get(details, "duplicates"), i, e) {
    const char *v = json_string_value(json_object_get(e, "value"));
    char at[40], first[40], msg[1400];
    where(c, json_integer_value(json_object_get(e, "line")), at, sizeof at);
    where(c, json_integer_value(json_object_get(e, "firstLine")), first, sizeof first);
    snprintf(msg, sizeof msg, "%s: the value \"%s\" is already on %s", at, v ? v : "", first);
    json_t *m = json_string(msg); /* NULL when a long value was cut inside a character */
    if (!m) {
      snprintf(msg, sizeof msg, "%s: the value is already on %s", at, first);
      m = json_string(msg);
    }
    json_array_append_new(out, m);
  }
  bool have_dups = json_array_size(out) > 0;
  json_array_foreach(json_object_get(details, "fields"), i, e) {
    const char *path = json_string_value(json_object_get(e, "path"));
    const char *reason = json_string_value(json_object_get(e, "reason"));
    long long idx;
    int used = 0;
    if (!path || !reason || sscanf(path, "lines[%lld]%n", &idx, &used) != 1 || !used) continue;
    if (have_dups && strcmp(reason, "duplicate_value") == 0) continue;
    const char *rest = path + used;
    if (*rest == '.') rest++;
    char at[40], msg[600];
    where(c, idx, at, sizeof at);
    snprintf(msg, sizeof msg, "%s: %.256s%s%.300s", at, rest, *rest ? ": " : "", reason);
    json_array_append_new(out, json_string(msg));
  }
  return out;
}
