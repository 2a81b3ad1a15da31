/*
 * `suggestd import` and `suggestd export`: the client side of the NDJSON item transfer,
 * over libcurl.
 *
 *   suggestd import --control-url URL --secret-key-file F --list L FILE [--replace]
 *                   [--publish] [--idempotency-key K] [--format ndjson|json|csv|tsv]
 *                   [--value-column C] [--display-column C] [--rank-column C]
 *                   [--aliases-column C] [--aliases-separator S] [--parent-column C]
 *                   [--order-column C] [--delimiter D]
 *   suggestd export --control-url URL --secret-key-file F --list L [FILE | -]
 *
 * The file is streamed (read in 64 KiB pieces as libcurl asks for them, never loaded
 * whole). A JSON array or a CSV file is converted to NDJSON on the way (convert.h), and the
 * server's `lines[N]` errors are reported against the lines of the user's own file. Progress goes
 * to stderr: a bar redrawn in place when stderr is a terminal (bytes, items, rate, ETA), otherwise
 * one plain line every PLAIN_EVERY_MS. The result is one JSON object on stdout; errors are
 * {"error": …} on stderr with a non-zero exit, like every other command. The secret key is read
 * from a file so that it never shows in a process list or shell history, and it is never printed.
 */
#include <curl/curl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "client/client.h"
#include "client/convert.h"
#include "common/args.h"
#include "common/buf.h"
#include "common/util.h"

#define TTY_EVERY_MS 100
#define PLAIN_EVERY_MS 2000
#define MAX_RESPONSE ((size_t)4 << 20)
#define POLL_MS 500

static const sg_flag_spec flags[] = {
    {"control-url", true, false},
    {"secret-key-file", true, false},
    {"list", true, false},
    {"replace", false, false},
    {"publish", false, false},
    {"idempotency-key", true, false},
    {"format", true, false},
    {"value-column", true, false},
    {"display-column", true, false},
    {"rank-column", true, false},
    {"aliases-column", true, false},
    {"aliases-separator", true, false},
    {"parent-column", true, false},
    {"order-column", true, false},
    {"description-column", true, false},
    {"delimiter", true, false},
    {NULL, false, false},
};

/* ---- progress ------------------------------------------------------------------------- */

typedef struct {
  const char *what; /* "import" or "export" */
  bool tty;
  uint64_t total; /* bytes expected (0: unknown) */
  uint64_t bytes, items;
  int64_t t0, last;
  int64_t t_end; /* when the transfer finished (0: still running); rates stop there */
  bool drawn;
} progress;

static void human_bytes(uint64_t n, char *out, size_t outsz) {
  if (n >= (1u << 20))
    snprintf(out, outsz, "%.1f MiB", (double)n / (1 << 20));
  else if (n >= 1024)
    snprintf(out, outsz, "%.1f KiB", (double)n / 1024);
  else
    snprintf(out, outsz, "%llu B", (unsigned long long)n);
}

/* Draws the progress line when it is due (or always when force). */
static void progress_draw(progress *p, bool force) {
  int64_t now = sg_mono_ms();
  if (!force && now - p->last < (p->tty ? TTY_EVERY_MS : PLAIN_EVERY_MS)) return;
  p->last = now;
  double secs = (double)((p->t_end ? p->t_end : now) - p->t0) / 1000.0;
  double rate = secs > 0 ? (double)p->items / secs : 0;
  double brate = secs > 0 ? (double)p->bytes / secs : 0;
  char done[32], total[32], eta[32] = "";
  human_bytes(p->bytes, done, sizeof done);
  human_bytes(p->total, total, sizeof total);
  if (p->total && brate > 0 && p->bytes < p->total)
    snprintf(eta, sizeof eta, ", ETA %.0fs", (double)(p->total - p->bytes) / brate);
  int pct = p->total ? (int)(p->bytes * 100 / p->total) : -1;
  if (p->tty) {
    char bar[32];
    int fill = pct < 0 ? 0 : pct * 24 / 100;
    for (int i = 0; i < 24; i++) bar[i] = i < fill ? '=' : (i == fill ? '>' : ' ');
    bar[24] = '\0';
    if (pct >= 0)
      fprintf(stderr, "\r%s [%s] %3d%% %s/%s %llu items %.0f items/s%s\033[K", p->what, bar, pct,
              done, total, (unsigned long long)p->items, rate, eta);
    else
      fprintf(stderr, "\r%s %s %llu items %.0f items/s\033[K", p->what, done,
              (unsigned long long)p->items, rate);
  } else if (pct >= 0) {
    fprintf(stderr, "%s: %s of %s (%d%%), %llu items, %.0f items/s%s\n", p->what, done, total, pct,
            (unsigned long long)p->items, rate, eta);
  } else {
    fprintf(stderr, "%s: %s, %llu items, %.0f items/s\n", p->what, done,
            (unsigned long long)p->items, rate);
  }
  p->drawn = true;
  fflush(stderr);
}

/* Ends the progress display with a final state line. */
static void progress_end(progress *p, const char *note) {
  progress_draw(p, true);
  if (p->tty) fprintf(stderr, "\n");
  if (note) fprintf(stderr, "%s: %s\n", p->what, note);
  fflush(stderr);
}

static void progress_count(progress *p, const char *data, size_t n) {
  p->bytes += n;
  for (const char *q = data, *end = data + n; (q = memchr(q, '\n', (size_t)(end - q))); q++)
    p->items++;
  progress_draw(p, false);
}

/* ---- HTTP ------------------------------------------------------------------------------ */

typedef struct {
  CURL *curl;
  struct curl_slist *headers;
  char base[1024]; /* control URL without a trailing slash */
  char auth[512];  /* "Authorization: Bearer …" */
} client;

static size_t collect(char *data, size_t size, size_t n, void *ctx) {
  sg_buf *b = ctx;
  return sg_buf_append(b, data, size * n) ? 0 : size * n;
}

/* Reads the key file (first line, whitespace trimmed). Returns 0 or -1. */
static int read_key(const char *path, char *out, size_t outsz) {
  char *data = NULL;
  size_t len = 0;
  if (sg_read_file(path, 4096, &data, &len)) return -1;
  size_t a = 0, b = strcspn(data, "\r\n");
  while (a < b && (data[a] == ' ' || data[a] == '\t')) a++;
  while (b > a && (data[b - 1] == ' ' || data[b - 1] == '\t')) b--;
  int rc = b > a && b - a < outsz ? 0 : -1;
  if (!rc) {
    memcpy(out, data + a, b - a);
    out[b - a] = '\0';
  }
  explicit_bzero(data, len);
  free(data);
  return rc;
}

static bool safe_id(const char *s) {
  if (!*s || strlen(s) > 100) return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '_' || *s == '-'))
      return false;
  return true;
}

static int client_init(client *cl, sg_args *a) {
  memset(cl, 0, sizeof *cl);
  const char *url = sg_args_get(a, "control-url");
  const char *keyf = sg_args_get(a, "secret-key-file");
  if (!url || !keyf || !sg_args_get(a, "list"))
    return sg__cli_fail("--control-url, --secret-key-file and --list are required", NULL);
  if (!safe_id(sg_args_get(a, "list"))) return sg__cli_fail("--list is not a list id", NULL);
  snprintf(cl->base, sizeof cl->base, "%s", url);
  size_t n = strlen(cl->base);
  while (n && cl->base[n - 1] == '/') cl->base[--n] = '\0';
  char key[400];
  if (read_key(keyf, key, sizeof key))
    return sg__cli_fail("cannot read a secret key from '%s'", keyf);
  snprintf(cl->auth, sizeof cl->auth, "Authorization: Bearer %s", key);
  explicit_bzero(key, sizeof key);
  if (curl_global_init(CURL_GLOBAL_DEFAULT) || !(cl->curl = curl_easy_init()))
    return sg__cli_fail("cannot initialise libcurl", NULL);
  return 0;
}

static void client_free(client *cl) {
  if (cl->curl) curl_easy_cleanup(cl->curl);
  curl_slist_free_all(cl->headers);
  explicit_bzero(cl->auth, sizeof cl->auth);
  curl_global_cleanup();
}

/* Prepares a request on the shared handle: method, URL, the auth header plus extra
 * headers (NULL-ended), and the response collected into *body. */
static void request_setup(client *cl, const char *method, const char *path,
                          const char *const *extra, sg_buf *body) {
  char url[2048];
  snprintf(url, sizeof url, "%s%s", cl->base, path);
  curl_easy_reset(cl->curl);
  curl_slist_free_all(cl->headers);
  cl->headers = curl_slist_append(NULL, cl->auth);
  for (; extra && *extra; extra++) cl->headers = curl_slist_append(cl->headers, *extra);
  curl_easy_setopt(cl->curl, CURLOPT_URL, url);
  curl_easy_setopt(cl->curl, CURLOPT_CUSTOMREQUEST, method);
  curl_easy_setopt(cl->curl, CURLOPT_HTTPHEADER, cl->headers);
  curl_easy_setopt(cl->curl, CURLOPT_CONNECTTIMEOUT, 10L);
  curl_easy_setopt(cl->curl, CURLOPT_NOSIGNAL, 1L);
  if (body) {
    curl_easy_setopt(cl->curl, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(cl->curl, CURLOPT_WRITEDATA, body);
  }
}

/* Performs the prepared request. Returns the HTTP status, or -1 after printing the
 * transport error. */
static long request_run(client *cl) {
  CURLcode rc = curl_easy_perform(cl->curl);
  if (rc != CURLE_OK) {
    /* Name the URL: "Couldn't connect to server" alone does not say which one, nor that
     * --control-url chose it. */
    const char *url = NULL;
    curl_easy_getinfo(cl->curl, CURLINFO_EFFECTIVE_URL, &url);
    char msg[1024];
    int n = snprintf(msg, sizeof msg, "%.900s: %s%s", url ? url : cl->base, curl_easy_strerror(rc),
                     rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
                             rc == CURLE_OPERATION_TIMEDOUT
                         ? " (is the control plane running there? --control-url sets where it is)"
                         : "");
    if (n < 0) msg[0] = '\0';
    sg__cli_fail("request failed: %s", msg);
    return -1;
  }
  long status = 0;
  curl_easy_getinfo(cl->curl, CURLINFO_RESPONSE_CODE, &status);
  return status;
}

/* Seconds since t0_ms, to the millisecond: a duration printed as 1.763, not as the
 * nearest double's 17 digits (1.7629999999999999). Dumped with JSON_REAL_PRECISION. */
static json_t *seconds_since(int64_t t0_ms) {
  return json_real(round((double)(sg_mono_ms() - t0_ms)) / 1000.0);
}
#define SECONDS_PRECISION JSON_REAL_PRECISION(12)

/* GET path as JSON into *out (the caller's to free). Returns the HTTP status, or -1. */
static long get_json(client *cl, const char *path, json_t **out) {
  sg_buf body;
  sg_buf_init(&body, MAX_RESPONSE);
  request_setup(cl, "GET", path, NULL, &body);
  long status = request_run(cl);
  *out = status == 200 && body.data ? json_loads(body.data, 0, NULL) : NULL;
  sg_buf_free(&body);
  return status;
}

/* Prints {"error", "status", "response"} for an unexpected answer; returns 1. */
static int fail_status(const char *what, long status, const sg_buf *body) {
  json_t *resp = body->data ? json_loads(body->data, 0, NULL) : NULL;
  char msg[128];
  snprintf(msg, sizeof msg, "%s answered HTTP %ld", what, status);
  json_t *o = json_pack("{s:s,s:I,s:o}", "error", msg, "status", (json_int_t)status, "response",
                        resp ? resp : json_null());
  char *s = json_dumps(o, JSON_COMPACT);
  fprintf(stderr, "%s\n", s ? s : "{\"error\":\"?\"}");
  free(s);
  json_decref(o);
  return 1;
}

/* ---- import ------------------------------------------------------------------------------ */

typedef struct {
  FILE *f;
  progress *p;
  bool sent;
  sg_convert conv;
  sg_buf out; /* converted NDJSON not yet handed to libcurl */
  size_t off; /* how much of out was handed over */
  bool eof;
  bool failed; /* conversion failed: conv.err says where */
  bool noted;  /* the CSV column note was printed */
} upload;

/* Prints, once, which CSV columns were not mapped to any item field. */
static void note_columns(upload *u) {
  if (u->noted || u->conv.fmt != SG_FMT_CSV || !u->conv.header) return;
  u->noted = true;
  char unused[512];
  sg_convert_unused_columns(&u->conv, unused, sizeof unused);
  if (*unused)
    fprintf(stderr,
            "import: ignoring CSV columns: %s (map them with --value-column, "
            "--display-column, --rank-column, --aliases-column, --parent-column, "
            "--order-column or --description-column)\n",
            unused);
}

/* libcurl's read callback: the file converted to NDJSON, as much as libcurl asks for. */
static size_t read_body(char *buf, size_t size, size_t n, void *ctx) {
  upload *u = ctx;
  size_t want = size * n;
  while (u->out.len - u->off < want && !u->eof) {
    char in[65536];
    size_t got = fread(in, 1, sizeof in, u->f);
    if (got == 0) {
      if (ferror(u->f)) return CURL_READFUNC_ABORT;
      u->eof = true;
      if (sg_convert_finish(&u->conv, &u->out)) u->failed = true;
    } else {
      u->p->bytes += got; /* progress counts the user's file */
      if (sg_convert_feed(&u->conv, in, got, &u->out)) u->failed = true;
      note_columns(u);
    }
    if (u->failed) return CURL_READFUNC_ABORT;
  }
  size_t k = u->out.len - u->off < want ? u->out.len - u->off : want;
  if (k) memcpy(buf, u->out.data + u->off, k);
  u->off += k;
  for (const char *q = buf, *end = buf + k; (q = memchr(q, '\n', (size_t)(end - q))); q++)
    u->p->items++;
  if (u->off == u->out.len) {
    sg_buf_reset(&u->out);
    u->off = 0;
  }
  progress_draw(u->p, false);
  if (k == 0 && !u->sent) {
    u->p->t_end = sg_mono_ms();
    /* The server validates as the bytes arrive but applies everything at the end, which
     * takes a while for a big file: say so rather than look stuck. */
    u->sent = true;
    progress_end(u->p, "sent; the server is applying the items");
  }
  return k;
}

/* POST …/versions, then polls until the version is resolved. *out is the version. */
static int publish(client *cl, const char *list, json_t **out) {
  char path[256];
  snprintf(path, sizeof path, "/api/v1/lists/%s/versions", list);
  sg_buf body;
  sg_buf_init(&body, MAX_RESPONSE);
  static const char *const json_ct[] = {"Content-Type: application/json", NULL};
  request_setup(cl, "POST", path, json_ct, &body);
  curl_easy_setopt(cl->curl, CURLOPT_POSTFIELDS, "{}");
  long status = request_run(cl);
  if (status < 0) return 1;
  if (status != 200 && status != 202) {
    int rc = fail_status("publish", status, &body);
    sg_buf_free(&body);
    return rc;
  }
  json_t *v = json_loads(body.data, 0, NULL);
  sg_buf_free(&body);
  int64_t t0 = sg_mono_ms();
  while (v && json_string_value(json_object_get(v, "state")) &&
         strcmp(json_string_value(json_object_get(v, "state")), "queued") == 0) {
    fprintf(stderr, "publish: version %lld queued (%llds)\n",
            (long long)json_integer_value(json_object_get(v, "versionNumber")),
            (long long)((sg_mono_ms() - t0) / 1000));
    usleep(POLL_MS * 1000);
    char vpath[300];
    snprintf(vpath, sizeof vpath, "%s/%lld", path,
             (long long)json_integer_value(json_object_get(v, "versionNumber")));
    sg_buf_init(&body, MAX_RESPONSE);
    request_setup(cl, "GET", vpath, NULL, &body);
    status = request_run(cl);
    if (status != 200) {
      json_decref(v);
      int rc = status < 0 ? 1 : fail_status("version poll", status, &body);
      sg_buf_free(&body);
      return rc;
    }
    json_decref(v);
    v = json_loads(body.data, 0, NULL);
    sg_buf_free(&body);
  }
  if (!v) return sg__cli_fail("publish answered something that is not JSON", NULL);
  *out = v;
  return 0;
}

/* Chooses the format (--format, else the name and first bytes) and the CSV column map,
 * and converts the first bytes read for detection. Returns 0, or 1 after printing why. */
static int upload_init(upload *u, sg_args *a, const char *name) {
  sg_csv_map map = {
      .value = sg_args_get(a, "value-column"),
      .display_value = sg_args_get(a, "display-column"),
      .rank = sg_args_get(a, "rank-column"),
      .aliases = sg_args_get(a, "aliases-column"),
      .parent_value = sg_args_get(a, "parent-column"),
      .display_order = sg_args_get(a, "order-column"),
      .description = sg_args_get(a, "description-column"),
  };
  const char *sep = sg_args_get(a, "aliases-separator");
  const char *delim = sg_args_get(a, "delimiter");
  if ((sep && strlen(sep) != 1) || (delim && strcmp(delim, "\\t") != 0 && strlen(delim) != 1))
    return sg__cli_fail("--aliases-separator and --delimiter take one character (\\t for a tab)",
                        NULL);
  if (sep) map.aliases_split = sep[0];
  if (delim) map.delimiter = strcmp(delim, "\\t") == 0 ? '\t' : delim[0];
  char head[65536];
  size_t got = fread(head, 1, sizeof head, u->f);
  if (got == 0 && ferror(u->f)) return sg__cli_fail("cannot read '%s'", name);
  sg_import_format fmt;
  const char *fs = sg_args_get(a, "format");
  if (fs) {
    if (sg_convert_parse_format(fs, &fmt, &map.delimiter))
      return sg__cli_fail("--format takes ndjson, json, csv or tsv, not '%s'", fs);
  } else {
    fmt = sg_convert_detect(strcmp(name, "-") ? name : NULL, head, got);
    const char *dot = strrchr(name, '.');
    if (fmt == SG_FMT_CSV && dot && !strcasecmp(dot, ".tsv") && !delim) map.delimiter = '\t';
  }
  sg_convert_init(&u->conv, fmt, &map);
  sg_buf_init(&u->out, 0);
  u->p->bytes += got;
  if (got && sg_convert_feed(&u->conv, head, got, &u->out)) u->failed = true;
  note_columns(u);
  /* fread stops short only at the end of the input (or an error, seen on the next read). */
  if (!u->failed && got < sizeof head && feof(u->f)) {
    u->eof = true;
    if (sg_convert_finish(&u->conv, &u->out)) u->failed = true;
  }
  return 0;
}

/* Prints the import's error with "problems" against the user's file; returns 1. */
static int fail_import(long status, const sg_buf *body, const sg_convert *conv) {
  json_t *resp = body->data ? json_loads(body->data, 0, NULL) : NULL;
  char msg[128];
  snprintf(msg, sizeof msg, "import answered HTTP %ld", status);
  json_t *o = json_pack("{s:s,s:I}", "error", msg, "status", (json_int_t)status);
  if (resp && status == 400)
    json_object_set_new(o, "problems", sg_convert_problems(conv, json_object_get(resp, "details")));
  json_object_set_new(o, "response", resp ? resp : json_null());
  char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  fprintf(stderr, "%s\n", s ? s : "{\"error\":\"?\"}");
  free(s);
  json_decref(o);
  return 1;
}

int sg_cmd_import(int argc, char **argv) {
  sg_args a;
  char err[256];
  if (sg_args_parse(&a, argc, argv, flags, err, sizeof err)) return sg__cli_fail("%s", err);
  if (a.npos != 1)
    return sg__cli_fail("usage: suggestd import --control-url URL --secret-key-file F --list L "
                        "FILE (suggestd import --help)",
                        NULL);
  client cl;
  if (client_init(&cl, &a)) return 1;
  const char *list = sg_args_get(&a, "list");
  bool replace = sg_args_has(&a, "replace");
  FILE *f = strcmp(a.pos[0], "-") == 0 ? stdin : fopen(a.pos[0], "rb");
  if (!f) {
    client_free(&cl);
    return sg__cli_fail("cannot open '%s'", a.pos[0]);
  }
  struct stat sb;
  progress p = {.what = "import", .tty = isatty(2) == 1, .t0 = sg_mono_ms()};
  if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode)) p.total = (uint64_t)sb.st_size;
  upload u = {.f = f, .p = &p};
  if (upload_init(&u, &a, a.pos[0])) {
    if (f != stdin) fclose(f);
    client_free(&cl);
    return 1;
  }

  /* A fresh Idempotency-Key per run (or the one given), so a retry of this very run by
   * libcurl or a proxy cannot import twice. */
  char key[300], idem[320];
  const char *k = sg_args_get(&a, "idempotency-key");
  if (k)
    snprintf(key, sizeof key, "%s", k);
  else
    sg_random_id("import_", key, sizeof key);
  snprintf(idem, sizeof idem, "Idempotency-Key: %s", key);
  const char *const hdrs[] = {"Content-Type: application/x-ndjson", idem, NULL};
  char path[256];
  snprintf(path, sizeof path, "/api/v1/lists/%s/items/import?mode=%s", list,
           replace ? "replace" : "append");
  sg_buf body;
  sg_buf_init(&body, MAX_RESPONSE);
  request_setup(&cl, "POST", path, hdrs, &body);
  curl_easy_setopt(cl.curl, CURLOPT_POST, 1L);
  curl_easy_setopt(cl.curl, CURLOPT_READFUNCTION, read_body);
  curl_easy_setopt(cl.curl, CURLOPT_READDATA, &u);
  /* NDJSON goes as it is, so its length is the file's; a converted body is chunked. */
  if (p.total && u.conv.fmt == SG_FMT_NDJSON)
    curl_easy_setopt(cl.curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)p.total);
  long status = u.failed ? -1 : request_run(&cl);
  if (f != stdin) fclose(f);
  if (!u.sent) {
    p.t_end = sg_mono_ms();
    progress_end(&p, NULL);
  }
  int rc = 1;
  json_t *out = NULL, *version = NULL;
  if (u.failed) {
    rc = sg__cli_fail("%s", u.conv.err);
    goto done;
  }
  if (status < 0) goto done;
  if (status != 200) {
    rc = fail_import(status, &body, &u.conv);
    goto done;
  }
  out = json_loads(body.data, 0, NULL);
  if (!out) {
    rc = sg__cli_fail("import answered something that is not JSON", NULL);
    goto done;
  }
  json_object_set_new(out, "list", json_string(list));
  json_object_set_new(out, "bytes", json_integer((json_int_t)p.bytes));
  json_object_set_new(out, "seconds", seconds_since(p.t0));
  if (sg_args_has(&a, "publish")) {
    int64_t t0 = sg_mono_ms();
    /* The version active before, to say when the new one has the same content. */
    char lpath[256];
    snprintf(lpath, sizeof lpath, "/api/v1/lists/%s", list);
    json_t *before = NULL;
    if (get_json(&cl, lpath, &before) < 0) goto done;
    json_int_t prev = json_integer_value(json_object_get(before, "activeVersionNumber"));
    json_decref(before);
    if (publish(&cl, list, &version)) goto done;
    json_object_set_new(out, "publishSeconds", seconds_since(t0));
    const char *hash = json_string_value(json_object_get(version, "contentHash"));
    json_int_t now = json_integer_value(json_object_get(version, "versionNumber"));
    if (prev > 0 && hash && now != prev) {
      char vpath[300];
      snprintf(vpath, sizeof vpath, "%s/versions/%lld", lpath, (long long)prev);
      json_t *old = NULL;
      if (get_json(&cl, vpath, &old) == 200) {
        const char *oh = json_string_value(json_object_get(old, "contentHash"));
        bool same = oh && strcmp(oh, hash) == 0;
        json_object_set_new(out, "publishUnchanged", json_boolean(same));
        if (same)
          fprintf(stderr,
                  "publish: nothing changed since version %lld: version %lld serves the same "
                  "items\n",
                  (long long)prev, (long long)now);
      }
      json_decref(old);
    }
  } else {
    fprintf(stderr,
            "import: the items are stored, not yet served: they go live when the list is "
            "published (import --publish, or POST /api/v1/lists/%s/versions)\n",
            list);
  }
  json_object_set_new(out, "version", version ? version : json_null());
  char *s = json_dumps(out, JSON_COMPACT | SECONDS_PRECISION);
  printf("%s\n", s ? s : "{}");
  free(s);
  rc = 0;
done:
  json_decref(out);
  sg_buf_free(&body);
  sg_buf_free(&u.out);
  sg_convert_free(&u.conv);
  client_free(&cl);
  return rc;
}

/* ---- export ------------------------------------------------------------------------------ */

typedef struct {
  FILE *f;
  progress *p;
  sg_buf err; /* the body of a non-200 answer */
  long status;
  CURL *curl;
} download;

static size_t write_body(char *data, size_t size, size_t n, void *ctx) {
  download *d = ctx;
  if (!d->status) curl_easy_getinfo(d->curl, CURLINFO_RESPONSE_CODE, &d->status);
  if (d->status != 200) return collect(data, size, n, &d->err);
  if (fwrite(data, 1, size * n, d->f) != size * n) return 0;
  progress_count(d->p, data, size * n);
  return size * n;
}

int sg_cmd_export(int argc, char **argv) {
  sg_args a;
  char err[256];
  if (sg_args_parse(&a, argc, argv, flags, err, sizeof err)) return sg__cli_fail("%s", err);
  if (a.npos > 1)
    return sg__cli_fail("usage: suggestd export --control-url URL --secret-key-file F --list L "
                        "[FILE] (suggestd export --help)",
                        NULL);
  client cl;
  if (client_init(&cl, &a)) return 1;
  const char *list = sg_args_get(&a, "list");
  const char *dest = a.npos ? a.pos[0] : "-";
  bool to_stdout = strcmp(dest, "-") == 0;
  /* Into a temporary name, renamed at the end: a failed export leaves no partial file. */
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.part", dest);
  FILE *f = to_stdout ? stdout : fopen(tmp, "wb");
  if (!f) {
    client_free(&cl);
    return sg__cli_fail("cannot write '%s'", dest);
  }
  progress p = {.what = "export", .tty = isatty(2) == 1, .t0 = sg_mono_ms()};
  download d = {.f = f, .p = &p, .curl = cl.curl};
  sg_buf_init(&d.err, MAX_RESPONSE);
  char path[256];
  snprintf(path, sizeof path, "/api/v1/lists/%s/items/export", list);
  request_setup(&cl, "GET", path, NULL, NULL);
  d.curl = cl.curl;
  curl_easy_setopt(cl.curl, CURLOPT_WRITEFUNCTION, write_body);
  curl_easy_setopt(cl.curl, CURLOPT_WRITEDATA, &d);
  long status = request_run(&cl);
  int rc = 1;
  bool ok = status == 200 && fflush(f) == 0 && (to_stdout || fsync(fileno(f)) == 0);
  if (!to_stdout) {
    ok = fclose(f) == 0 && ok;
    if (ok && rename(tmp, dest) != 0) ok = false;
    if (!ok) unlink(tmp);
  }
  p.t_end = sg_mono_ms();
  progress_end(&p, NULL);
  if (status > 0 && status != 200) {
    rc = fail_status("export", status, &d.err);
  } else if (ok) {
    json_t *o = json_pack("{s:s,s:s,s:I,s:I,s:f}", "list", list, "file", dest, "items",
                          (json_int_t)p.items, "bytes", (json_int_t)p.bytes, "seconds", 0.0);
    json_object_set_new(o, "seconds", seconds_since(p.t0));
    char *s = json_dumps(o, JSON_COMPACT | SECONDS_PRECISION);
    /* With the items on stdout the summary goes to stderr, keeping stdout pure NDJSON. */
    fprintf(to_stdout ? stderr : stdout, "%s\n", s ? s : "{}");
    free(s);
    json_decref(o);
    rc = 0;
  } else if (status == 200) {
    rc = sg__cli_fail("cannot write '%s'", dest);
  }
  sg_buf_free(&d.err);
  client_free(&cl);
  return rc;
}

/* ---- versions activate (rollback) --------------------------------------------------------- */

static const sg_flag_spec versions_flags[] = {
    {"control-url", true, false}, {"secret-key-file", true, false},
    {"list", true, false},        {"if-match", true, false},
    {NULL, false, false},
};

/* `suggestd versions activate N --list L`: POST /api/v1/lists/{L}/versions/{N}/activate
 * (docs/PUBLISHING.md, "Rollback"); prints the version with its edgeSync. */
int sg_cmd_versions(int argc, char **argv) {
  sg_args a;
  char err[256];
  if (sg_args_parse(&a, argc, argv, versions_flags, err, sizeof err))
    return sg__cli_fail("%s", err);
  int64_t n;
  if (a.npos != 2 || strcmp(a.pos[0], "activate") != 0 || sg_parse_i64(a.pos[1], 1, INT64_MAX, &n))
    return sg__cli_fail("usage: suggestd versions activate N --control-url URL --secret-key-file F "
                        "--list L [--if-match ETAG] (suggestd versions --help)",
                        NULL);
  client cl;
  if (client_init(&cl, &a)) return 1;
  char path[256], im[300];
  snprintf(path, sizeof path, "/api/v1/lists/%s/versions/%lld/activate", sg_args_get(&a, "list"),
           (long long)n);
  const char *etag = sg_args_get(&a, "if-match");
  const char *extra[] = {NULL, NULL};
  if (etag) {
    snprintf(im, sizeof im, "If-Match: %.280s", etag);
    extra[0] = im;
  }
  sg_buf body;
  sg_buf_init(&body, MAX_RESPONSE);
  request_setup(&cl, "POST", path, extra, &body);
  long status = request_run(&cl);
  int rc = 1;
  if (status == 200) {
    printf("%.*s\n", (int)body.len, body.data ? body.data : "");
    rc = 0;
  } else if (status > 0) {
    rc = fail_status("activate", status, &body);
  }
  sg_buf_free(&body);
  client_free(&cl);
  return rc;
}
