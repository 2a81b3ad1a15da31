/*
 * Streaming conversion of an import file to the NDJSON the import route takes, so that
 * `suggestd import` accepts NDJSON, a JSON array of item objects, or CSV with a header row.
 *
 * Bytes go in as they are read (any chunking) and NDJSON comes out, one item per line;
 * nothing is held beyond the current element (JSON) or record (CSV). For each NDJSON line
 * the converter remembers the 1-based line of the input where its item starts, so server
 * errors about `lines[N]` can be reported against the user's own file.
 *
 * The JSON splitter does not parse values (the server does, with the same code as every
 * other import): it tracks strings and nesting depth only, so it never recurses and costs
 * one pass. CSV follows RFC 4180 (quoted fields, "" escapes, line breaks inside quotes,
 * CRLF), with a header row naming the columns.
 */
#ifndef SG_CLIENT_CONVERT_H
#define SG_CLIENT_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/buf.h"

typedef enum { SG_FMT_NDJSON, SG_FMT_JSON, SG_FMT_CSV } sg_import_format;

/* CSV column names for each item field; NULL means the field's own name. */
typedef struct {
  const char *value, *display_value, *rank, *aliases, *parent_value, *display_order, *description;
  char delimiter;     /* ',' by default; '\t' for TSV */
  char aliases_split; /* separator inside the aliases cell; '|' by default */
} sg_csv_map;

#define SG_CONVERT_MAX_RECORD ((size_t)1 << 20) /* one CSV record or JSON element */
/* The line map is kept as runs of NDJSON lines whose input lines follow each other (a
 * file without blank lines or multi-line records is one run), at most this many (4 MiB),
 * so a server converting a hostile upload holds a bounded map. Past it, later lines are
 * unknown (sg_convert_source_line answers 0). */
#define SG_CONVERT_MAX_RUNS ((size_t)1 << 18)

typedef struct {
  int64_t index; /* the first NDJSON line (0-based) of the run */
  int64_t line;  /* its input line; index + k is on line + k */
} sg_convert_run;

typedef struct {
  sg_import_format fmt;
  sg_csv_map map;
  int64_t line; /* current input line, 1-based */
  int state;
  int depth; /* JSON nesting inside the current element */
  bool in_str, esc;
  bool bom_checked;
  sg_buf field;  /* CSV: the current field */
  char **fields; /* CSV: the current record's fields */
  size_t nfields, capfields;
  char **header; /* CSV: column names */
  size_t nheader;
  int col[7]; /* CSV: column index of each item field, -1 when absent */
  int64_t record_line;
  size_t elem_bytes;
  sg_convert_run *runs; /* the input line of each NDJSON line, as runs */
  size_t nruns, capruns;
  int64_t nlines; /* NDJSON lines out so far */
  int64_t mapped; /* NDJSON lines whose input line is known (nlines unless past the cap) */
  char err[256];
} sg_convert;

/* Guesses the format from the file name (.ndjson .jsonl .json .csv .tsv) and the first
 * bytes ('[' JSON array, '{' NDJSON, anything else CSV). */
sg_import_format sg_convert_detect(const char *path, const char *head, size_t n);

/* Parses "ndjson" | "json" | "csv" | "tsv"; -1 for anything else. */
int sg_convert_parse_format(const char *s, sg_import_format *out, char *delimiter);

void sg_convert_init(sg_convert *c, sg_import_format fmt, const sg_csv_map *map);
/* Feeds input bytes, appending NDJSON to out. Returns 0, or -1 with c->err set (a sentence
 * that names the input line). After an error the converter accepts nothing more. */
int sg_convert_feed(sg_convert *c, const char *data, size_t n, sg_buf *out);
/* Ends the input (a last CSV record without a line break, an unclosed JSON array). */
int sg_convert_finish(sg_convert *c, sg_buf *out);
/* The 1-based input line where NDJSON line `index` (0-based) starts, or 0 when unknown. */
int64_t sg_convert_source_line(const sg_convert *c, int64_t index);
/* CSV columns of the header that map to no item field, comma-separated (empty if none). */
void sg_convert_unused_columns(const sg_convert *c, char *out, size_t outsz);
/* The `details` of an import's 400 names `lines[N]…` of the NDJSON the server received;
 * this says the same against the user's own file, one sentence per problem: "line 12:
 * rank: must be an integer …", and for a repeated value both lines. A new JSON array of
 * strings (empty when details holds nothing about lines). */
json_t *sg_convert_problems(const sg_convert *c, const json_t *details);
void sg_convert_free(sg_convert *c);

#endif
