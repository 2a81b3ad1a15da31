/*
 * `suggestd import` and `suggestd export`: the client side of the NDJSON item transfer,
 * over libcurl.
 *
 *   suggestd import --control-url URL --secret-key-file F --list L FILE [--replace]
 *                   [--publish] [--idempotency-key K]
 *   suggestd export --control-url URL --secret-key-file F --list L [FILE | -]
 *
 * The file is streamed (read in 64 KiB pieces as libcurl asks for them, never loaded
 * whole). Progress goes to stderr: a bar redrawn in place when stderr is a terminal
 * (bytes, items, rate, ETA), otherwise one plain line every PLAIN_EVERY_MS. The result is
 * one JSON object on stdout; errors are {"error": …} on stderr with a non-zero exit, like
 * every other command. The secret key is read from a file so that it never shows in a
 * process list or shell history, and it is never printed.
 */
#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "client/client.h"
#include "common/args.h"
#include "common/buf.h"
#include "common/util.h"

#define TTY_EVERY_MS 100
#define PLAIN_EVERY_MS 2000
#define MAX_RESPONSE ((size_t)4 << 20)
#define POLL_MS 500

static const sg_flag_spec flags[] = {
    {"control-url", true, false}, {"secret-key-file", true, false},
    {"list", true, false},        {"replace", false, false},
    {"publish", false, false},    {"idempotency-key", true, false},
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
    sg__cli_fail("request failed: %s", curl_easy_strerror(rc));
    return -1;
  }
  long status = 0;
  curl_easy_getinfo(cl->curl, CURLINFO_RESPONSE_CODE, &status);
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
} upload;

static size_t read_body(char *buf, size_t size, size_t n, void *ctx) {
  upload *u = ctx;
  size_t got = fread(buf, 1, size * n, u->f);
  if (got == 0 && ferror(u->f)) return CURL_READFUNC_ABORT;
  progress_count(u->p, buf, got);
  /* With a known size libcurl never asks again after the last byte. */
  if ((got == 0 || (u->p->total && u->p->bytes >= u->p->total)) && !u->sent) {
    u->p->t_end = sg_mono_ms();
    /* The server validates as the bytes arrive but applies everything at the end, which
     * takes a while for a big file: say so rather than look stuck. */
    u->sent = true;
    progress_end(u->p, "sent; the server is applying the items");
  }
  return got;
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

int sg_cmd_import(int argc, char **argv) {
  sg_args a;
  char err[256];
  if (sg_args_parse(&a, argc, argv, flags, err, sizeof err)) return sg__cli_fail("%s", err);
  if (a.npos != 1) return sg__cli_fail("usage: suggestd import … --list L FILE", NULL);
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
  upload u = {f, &p, false};
  curl_easy_setopt(cl.curl, CURLOPT_POST, 1L);
  curl_easy_setopt(cl.curl, CURLOPT_READFUNCTION, read_body);
  curl_easy_setopt(cl.curl, CURLOPT_READDATA, &u);
  if (p.total) curl_easy_setopt(cl.curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)p.total);
  long status = request_run(&cl);
  if (f != stdin) fclose(f);
  if (!u.sent) {
    p.t_end = sg_mono_ms();
    progress_end(&p, NULL);
  }
  int rc = 1;
  json_t *out = NULL, *version = NULL;
  if (status < 0) goto done;
  if (status != 200) {
    rc = fail_status("import", status, &body);
    goto done;
  }
  out = json_loads(body.data, 0, NULL);
  if (!out) {
    rc = sg__cli_fail("import answered something that is not JSON", NULL);
    goto done;
  }
  json_object_set_new(out, "list", json_string(list));
  json_object_set_new(out, "bytes", json_integer((json_int_t)p.bytes));
  json_object_set_new(out, "seconds", json_real((double)(sg_mono_ms() - p.t0) / 1000.0));
  if (sg_args_has(&a, "publish")) {
    int64_t t0 = sg_mono_ms();
    if (publish(&cl, list, &version)) goto done;
    json_object_set_new(out, "publishSeconds", json_real((double)(sg_mono_ms() - t0) / 1000.0));
  }
  json_object_set_new(out, "version", version ? version : json_null());
  char *s = json_dumps(out, JSON_COMPACT);
  printf("%s\n", s ? s : "{}");
  free(s);
  rc = 0;
done:
  json_decref(out);
  sg_buf_free(&body);
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
  if (a.npos > 1) return sg__cli_fail("usage: suggestd export … --list L [FILE]", NULL);
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
    json_t *o =
        json_pack("{s:s,s:s,s:I,s:I,s:f}", "list", list, "file", dest, "items", (json_int_t)p.items,
                  "bytes", (json_int_t)p.bytes, "seconds", (double)(sg_mono_ms() - p.t0) / 1000.0);
    char *s = json_dumps(o, JSON_COMPACT);
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
