/*
 * Side-by-side query benchmark: suggestd's artifact lookup against SQLite FTS5, on the
 * same items and the same query mix, in one process and one run.
 *
 *   query_bench --artifact A.art --items ITEMS.jsonl --fts-db DB
 *               [--mix top|spread] [--names 2000] [--rounds 3] [--fts-max 4000]
 *               [--fts-seconds 60] [--fts-rounds 5] [--queries-out FILE]
 *               [--typo-queries-out FILE]
 *               [--content-hash sha256:…]
 *
 * With --content-hash the artifact is loaded the way the runtime loads it
 * (sg_artifact_load_file: sealed memory of its own, checked hash) and settled onto huge
 * pages as the runtime's loader does once it serves it (sg_artifact_settle);
 * without it, mmapped (sg_artifact_open_file).
 *
 * Query mix: every character-boundary prefix of N display values (what a user types):
 * "top" takes the N highest-ranked items (cities: the most populous), "spread" takes N
 * items evenly spaced through the file (package names have no rank).
 *
 * suggestd side, per query: sg_normalize_into + sg_artifact_query_k with the default
 * typo policy's budget (docs/DESIGN.md §3.1) + the highlight of each item + assembly
 * of the fragments into a response body with memcpy (the runtime's build_body shape:
 * {"items":[…],"list":{"id":…},"requestId":"…"}). Timed per query with
 * CLOCK_MONOTONIC; the first round warms caches and is not counted.
 *
 * Typo mix, next to the exact mix in the same rounds: every query of the mix of at least
 * 4 code points (the default policy's first budget) with one edit (insert, delete,
 * substitute or swap of neighbours, never of the first code point), or two edits for
 * the queries of 8 code points or more. Reported as "typoNs" beside "exactNs" (the same
 * unedited queries) and "exactNoTypoNs" (the same with typo tolerance off, the lookup as
 * it was before typo tolerance).
 *
 * SQLite side: an FTS5 table (unicode61, remove_diacritics 2) over displayValue with
 * the item id and value UNINDEXED, built from the same JSONL in one transaction
 * (journal off, synchronous off: the most favourable settings for SQLite); the build is
 * timed from the first line read to the commit, like `suggestd compile`. Each query is
 * the normalised text as a phrase prefix ("q"*) with ORDER BY rank LIMIT 10 through one
 * reused prepared statement; the columns are copied into a buffer as the assembly.
 * FTS5 runs over an evenly spaced sample of at most --fts-max queries in a fixed shuffled
 * order (100 warm-up queries, then timed queries until the sample or its share of
 * --fts-seconds runs out, so the run stays bounded); the ratio compares both engines on
 * exactly the queries FTS5 answered, each engine warm in its own loop, in --fts-rounds
 * alternating rounds (FTS5, then suggestd): the ratio reported is the median of the
 * rounds' ratios, and the distributions those of the round that gave it, so one slow
 * moment of the machine does not decide the row.
 *
 * Prints one JSON object on stdout.
 */
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/normalize.h"
#include "compiler/typo.h"
#include "search/artifact.h"

#include "bench_time.h"

typedef struct {
  long long rank;
  char *id, *value, *dv;
} item;

static int cmp_rank(const void *a, const void *b) {
  const item *x = *(const item *const *)a, *y = *(const item *const *)b;
  if (x->rank != y->rank) return x->rank > y->rank ? -1 : 1;
  return strcmp(x->id, y->id);
}

static void die(const char *msg) {
  fprintf(stderr, "{\"error\":\"%s\"}\n", msg);
  exit(1);
}

/* Sorts t[0..n) and prints {"median":…,"p99":…,"p999":…,"mean":…}. */
static void print_dist(const char *name, long long *t, size_t n) {
  long long sum = 0;
  for (size_t i = 0; i < n; i++) sum += t[i];
  qsort(t, n, sizeof *t, cmp_ll);
  printf("\"%s\":{\"median\":%lld,\"p99\":%lld,\"p999\":%lld,\"mean\":%lld}", name,
         n ? t[n / 2] : 0, n ? t[n * 99 / 100] : 0, n ? t[n * 999 / 1000] : 0,
         n ? sum / (long long)n : 0);
}

/* ---- suggestd: normalise, look up, assemble ------------------------------------------ */

#define BODY_CAP (64 * 1024)
static char body[BODY_CAP];

static size_t sg_answer_k(const sg_artifact *a, const char *q, size_t qlen, int typo) {
  char nb[1024];
  long nl = sg_normalize_into(q, qlen, nb, sizeof nb);
  size_t len = nl > 0 ? (size_t)nl : 0, ncp = 0;
  for (size_t i = 0; i < len; i++) ncp += ((unsigned char)nb[i] & 0xC0) != 0x80;
  sg_typo_policy pol = SG_TYPO_POLICY_DEFAULT;
  pol.enabled = typo;
  sg_query_result r;
  sg_artifact_query_k(a, 0, nb, len, sg_typo_budget(&pol, ncp), &r);
  size_t hl = 0;
  for (size_t i = 0; i < r.n; i++) {
    char dv[2048];
    uint32_t h[16];
    long dl = sg_fragment_display_value(&r.items[i], dv, sizeof dv);
    if (dl >= 0)
      hl += (size_t)sg_typo_highlight(dv, (size_t)dl, nb, len, r.items[i].edits, r.items[i].tier, h,
                                      8);
  }
  static const char rid[] = "0123456789abcdef0123456789abcdef";
  char *p = body;
  memcpy(p, "{\"items\":[", 10);
  p += 10;
  for (size_t i = 0; i < r.n; i++) {
    if (p + r.items[i].len + 1 > body + BODY_CAP - 128) break;
    if (i) *p++ = ',';
    memcpy(p, r.items[i].json, r.items[i].len);
    p += r.items[i].len;
  }
  memcpy(p, "],\"list\":{\"id\":\"lst_bench\"},\"requestId\":\"", 41);
  p += 41;
  memcpy(p, rid, 32);
  p += 32;
  *p++ = '"';
  *p++ = '}';
  return (size_t)(p - body) + hl;
}

static size_t sg_answer(const sg_artifact *a, const char *q, size_t qlen) {
  return sg_answer_k(a, q, qlen, 1);
}

/* ---- the typo mix ------------------------------------------------------------------- */

static uint64_t rng(uint64_t *st) {
  uint64_t z = (*st += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Byte offsets of the code points of s[0..len) into starts (at most max), and len last. */
static size_t cp_starts(const char *s, size_t len, size_t *starts, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < len && n + 1 < max; i++)
    if (((unsigned char)s[i] & 0xC0) != 0x80) starts[n++] = i;
  starts[n] = len;
  return n;
}

/* One edit (insert, delete, substitute, swap of neighbours) of s[0..*len) in place, at a
 * code point other than the first (an edit of the first one matches nothing by
 * definition, so it measures nothing). */
static void edit_once(char *s, size_t *len, uint64_t *st) {
  size_t starts[600];
  size_t n = cp_starts(s, *len, starts, 600);
  if (n < 2) return;
  size_t at = 1 + rng(st) % (n - 1);
  char c = (char)('a' + rng(st) % 26);
  char tmp[2400];
  size_t b = starts[at], e = starts[at + 1];
  switch (rng(st) % 4) {
  case 0: /* insert */
    memcpy(tmp, s, b);
    tmp[b] = c;
    memcpy(tmp + b + 1, s + b, *len - b);
    *len += 1;
    break;
  case 1: /* delete */
    memcpy(tmp, s, b);
    memcpy(tmp + b, s + e, *len - e);
    *len -= e - b;
    break;
  case 2: /* substitute */
    memcpy(tmp, s, b);
    tmp[b] = c;
    memcpy(tmp + b + 1, s + e, *len - e);
    *len = *len - (e - b) + 1;
    break;
  default: /* swap with the previous code point */
    memcpy(tmp, s, *len);
    {
      size_t pb = starts[at - 1];
      memcpy(tmp + pb, s + b, e - b);
      memcpy(tmp + pb + (e - b), s + pb, b - pb);
    }
  }
  memcpy(s, tmp, *len);
  s[*len] = '\0';
}

/* ---- SQLite FTS5 --------------------------------------------------------------------- */

static sqlite3 *fts_build(const char *path, item *items, size_t n) {
  remove(path);
  sqlite3 *db;
  if (sqlite3_open(path, &db) != SQLITE_OK) die("sqlite open");
  char *err = NULL;
  if (sqlite3_exec(db,
                   "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-1000000;"
                   "CREATE VIRTUAL TABLE items USING fts5(dv, id UNINDEXED, value UNINDEXED,"
                   " tokenize='unicode61 remove_diacritics 2');"
                   "BEGIN;",
                   NULL, NULL, &err) != SQLITE_OK)
    die(err ? err : "sqlite exec");
  sqlite3_stmt *ins;
  if (sqlite3_prepare_v2(db, "INSERT INTO items(dv, id, value) VALUES (?, ?, ?)", -1, &ins, NULL) !=
      SQLITE_OK)
    die("sqlite prepare insert");
  for (size_t i = 0; i < n; i++) {
    sqlite3_bind_text(ins, 1, items[i].dv, -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 2, items[i].id, -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 3, items[i].value, -1, SQLITE_STATIC);
    if (sqlite3_step(ins) != SQLITE_DONE) die("sqlite insert");
    sqlite3_reset(ins);
  }
  sqlite3_finalize(ins);
  if (sqlite3_exec(db, "COMMIT;", NULL, NULL, &err) != SQLITE_OK) die("sqlite commit");
  return db;
}

/* The normalised query as an FTS5 phrase prefix: "text"* with quotes doubled. */
static int fts_match(const char *q, size_t qlen, char *out, size_t cap) {
  char nb[1024];
  long nl = sg_normalize_into(q, qlen, nb, sizeof nb);
  if (nl <= 0 || (size_t)nl * 2 + 4 > cap) return -1;
  char *p = out;
  *p++ = '"';
  for (long i = 0; i < nl; i++) {
    if (nb[i] == '"') *p++ = '"';
    *p++ = nb[i];
  }
  *p++ = '"';
  *p++ = '*';
  *p = '\0';
  return 0;
}

static size_t fts_answer(sqlite3_stmt *st, const char *match) {
  sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
  char *p = body;
  size_t rows = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    for (int c = 0; c < 3; c++) {
      const unsigned char *t = sqlite3_column_text(st, c);
      int l = sqlite3_column_bytes(st, c);
      if (t && p + l < body + BODY_CAP) {
        memcpy(p, t, (size_t)l);
        p += l;
      }
    }
    rows++;
  }
  sqlite3_reset(st);
  return rows + (size_t)(p - body);
}

/* ---- main ----------------------------------------------------------------------------- */

int main(int argc, char **argv) {
  const char *art_path = NULL, *items_path = NULL, *db_path = NULL, *mix = "top", *qout = NULL,
             *tqout = NULL;
  size_t names = 2000, fts_max = 4000;
  double fts_seconds = 60;
  const char *content_hash = NULL;
  int rounds = 3, fts_rounds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--artifact"))
      art_path = argv[i + 1];
    else if (!strcmp(argv[i], "--items"))
      items_path = argv[i + 1];
    else if (!strcmp(argv[i], "--fts-db"))
      db_path = argv[i + 1];
    else if (!strcmp(argv[i], "--mix"))
      mix = argv[i + 1];
    else if (!strcmp(argv[i], "--names"))
      names = (size_t)atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--rounds"))
      rounds = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--fts-max"))
      fts_max = (size_t)atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--queries-out"))
      qout = argv[i + 1];
    else if (!strcmp(argv[i], "--typo-queries-out"))
      tqout = argv[i + 1];
    else if (!strcmp(argv[i], "--content-hash"))
      content_hash = argv[i + 1];
    else if (!strcmp(argv[i], "--fts-seconds"))
      fts_seconds = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--fts-rounds"))
      fts_rounds = atoi(argv[i + 1]);
    else
      die("unknown flag");
  }
  if (!art_path || !items_path || !db_path || rounds < 2 || fts_rounds < 1 || fts_rounds > 99)
    die("usage");

  /* Items, read and kept for both engines (this read is part of the FTS5 build time). */
  long long t_build0 = now_ns();
  FILE *f = fopen(items_path, "r");
  if (!f) die("cannot open items");
  size_t n = 0, cap = 1 << 16;
  item *items = malloc(cap * sizeof *items);
  char *line = NULL;
  size_t lcap = 0;
  while (getline(&line, &lcap, f) > 0) {
    json_t *o = json_loads(line, 0, NULL);
    if (!o) continue;
    const char *id = json_string_value(json_object_get(o, "id"));
    const char *value = json_string_value(json_object_get(o, "value"));
    const char *dv = json_string_value(json_object_get(o, "displayValue"));
    if (!id || !value) die("item without id or value");
    if (n == cap) items = realloc(items, (cap *= 2) * sizeof *items);
    if (!items) die("oom");
    items[n].rank = json_integer_value(json_object_get(o, "rank"));
    items[n].id = strdup(id);
    items[n].value = strdup(value);
    items[n].dv = dv ? strdup(dv) : items[n].value;
    n++;
    json_decref(o);
  }
  free(line);
  fclose(f);
  sqlite3 *db = fts_build(db_path, items, n);
  double fts_build_s = (double)(now_ns() - t_build0) / 1e9;

  /* Query mix. */
  if (names > n) names = n;
  item **pick = malloc((names ? names : 1) * sizeof *pick);
  if (!strcmp(mix, "top")) {
    item **all = malloc(n * sizeof *all);
    for (size_t i = 0; i < n; i++) all[i] = &items[i];
    qsort(all, n, sizeof *all, cmp_rank);
    memcpy(pick, all, names * sizeof *pick);
    free(all);
  } else {
    for (size_t i = 0; i < names; i++) pick[i] = &items[i * (n / names)];
  }
  size_t nq = 0, qcap = 1 << 16;
  char **qs = malloc(qcap * sizeof *qs);
  for (size_t i = 0; i < names; i++) {
    const char *dv = pick[i]->dv;
    size_t len = strlen(dv);
    for (size_t k = 1; k <= len && k <= 255; k++) {
      if (k < len && ((unsigned char)dv[k] & 0xC0) == 0x80) continue;
      if (nq == qcap) qs = realloc(qs, (qcap *= 2) * sizeof *qs);
      qs[nq++] = strndup(dv, k);
    }
  }
  if (qout) {
    FILE *o = fopen(qout, "w");
    if (!o) die("cannot write queries");
    for (size_t i = 0; i < nq; i++) fprintf(o, "%s\n", qs[i]);
    fclose(o);
  }

  /* suggestd, every query, rounds - 1 counted rounds after a warm-up round. */
  sg_artifact *a;
  if (content_hash ? sg_artifact_load_file(art_path, content_hash, &a)
                   : sg_artifact_open_file(art_path, &a))
    die("cannot open artifact");
  for (size_t done = 0; content_hash && done < sg_artifact_size(a);)
    if (sg_artifact_settle(a, &done, SIZE_MAX) < 0) perror("settle");
  size_t counted = (size_t)(rounds - 1) * nq;
  long long *t_sg = malloc((counted ? counted : 1) * sizeof *t_sg);
  unsigned long long sink = 0;
  for (int r = 0; r < rounds; r++)
    for (size_t i = 0; i < nq; i++) {
      long long t0 = now_ns();
      sink += sg_answer(a, qs[i], strlen(qs[i]));
      long long t1 = now_ns();
      if (r > 0) t_sg[(size_t)(r - 1) * nq + i] = t1 - t0;
    }

  /* The typo mix: at most 3000 of the queries of 4 or more code points, evenly spaced,
   * each edited; timed in the same rounds as the same queries unedited. */
  size_t nt = 0, n1 = 0, n2 = 0;
  char **tq = malloc((nq ? nq : 1) * sizeof *tq);
  size_t *tsrc = malloc((nq ? nq : 1) * sizeof *tsrc);
  int *tedits = malloc((nq ? nq : 1) * sizeof *tedits);
  uint64_t tst = 42;
  for (size_t i = 0; i < nq; i++) {
    char nb[2400];
    long nl = sg_normalize_into(qs[i], strlen(qs[i]), nb, 1024);
    if (nl <= 0) continue;
    size_t starts[600];
    if (cp_starts(nb, (size_t)nl, starts, 600) < 4) continue;
    tsrc[nt++] = i;
  }
  size_t tstep = nt > 3000 ? (nt + 2999) / 3000 : 1, kept = 0;
  for (size_t j = 0; j < nt; j += tstep) {
    size_t i = tsrc[j];
    char nb[2400];
    long nl = sg_normalize_into(qs[i], strlen(qs[i]), nb, 1024);
    size_t starts[600], len = (size_t)nl;
    int edits = cp_starts(nb, len, starts, 600) >= 8 ? 1 + (int)(rng(&tst) % 2) : 1;
    for (int e = 0; e < edits; e++) edit_once(nb, &len, &tst);
    tq[kept] = strndup(nb, len);
    tedits[kept] = edits;
    tsrc[kept++] = i;
  }
  nt = kept;
  size_t tn = nt ? nt : 1;
  long long *t_e0 = calloc(tn, sizeof *t_e0), *t_e = calloc(tn, sizeof *t_e),
            *t_t = calloc(tn, sizeof *t_t), *t_t1 = calloc(tn, sizeof *t_t1),
            *t_t2 = calloc(tn, sizeof *t_t2);
  for (int r = 0; r < 2; r++) /* a warm-up round, then the counted one */
    for (size_t j = 0; j < nt; j++) {
      const char *q = qs[tsrc[j]];
      long long t0 = now_ns();
      sink += sg_answer_k(a, q, strlen(q), 0);
      long long t1 = now_ns();
      sink += sg_answer_k(a, q, strlen(q), 1);
      long long t2 = now_ns();
      sink += sg_answer_k(a, tq[j], strlen(tq[j]), 1);
      long long t3 = now_ns();
      if (r == 0) continue;
      t_e0[j] = t1 - t0;
      t_e[j] = t2 - t1;
      t_t[j] = t3 - t2;
      if (tedits[j] == 1)
        t_t1[n1++] = t3 - t2;
      else
        t_t2[n2++] = t3 - t2;
    }
  if (tqout) {
    FILE *o = fopen(tqout, "w");
    if (!o) die("cannot write typo queries");
    for (size_t j = 0; j < nt; j++) fprintf(o, "%s\n", tq[j]);
    fclose(o);
  }

  /* FTS5 and suggestd on the same sample: evenly spaced queries in a fixed shuffled
   * order, so stopping FTS5 at its time budget still leaves an unbiased sample. Each
   * engine runs its own loop (warm-up, then timed) so neither evicts the other's cache. */
  size_t step = nq > fts_max ? (nq + fts_max - 1) / fts_max : 1;
  size_t ns = 0, nsamp = 0;
  size_t *samp = malloc((nq / step + 1) * sizeof *samp);
  for (size_t i = 0; i < nq; i += step) samp[nsamp++] = i;
  unsigned long long rng = 0x9E3779B97F4A7C15ull;
  for (size_t i = nsamp; i > 1; i--) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    size_t j = (size_t)((rng >> 33) % i), tmp = samp[i - 1];
    samp[i - 1] = samp[j];
    samp[j] = tmp;
  }
  /* fts_rounds alternating rounds, each FTS5 then suggestd over the same queries; the
   * first FTS5 round stops at its share of --fts-seconds and fixes the sample. Reported:
   * the round whose median ratio is the median one, and the median of the ratios. */
  size_t scap = nsamp ? nsamp : 1;
  long long *t_fts = malloc((size_t)fts_rounds * scap * sizeof *t_fts);
  long long *t_sgs = malloc((size_t)fts_rounds * scap * sizeof *t_sgs);
  double *r_med = malloc((size_t)fts_rounds * sizeof *r_med);
  double *r_p99 = malloc((size_t)fts_rounds * sizeof *r_p99);
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db,
                         "SELECT id, value, dv FROM items WHERE items MATCH ?1 ORDER BY rank "
                         "LIMIT 10",
                         -1, &st, NULL) != SQLITE_OK)
    die("sqlite prepare query");
  char match[2100];
  for (size_t i = 0; i < nsamp && i < 100; i++) /* warm-up */
    if (!fts_match(qs[samp[i]], strlen(qs[samp[i]]), match, sizeof match))
      sink += fts_answer(st, match);
  long long deadline = now_ns() + (long long)(fts_seconds / fts_rounds * 1e9);
  for (size_t i = 0; i < nsamp && now_ns() < deadline; i++) {
    const char *q = qs[samp[i]];
    if (fts_match(q, strlen(q), match, sizeof match)) continue;
    long long t0 = now_ns();
    sink += fts_answer(st, match);
    t_fts[ns] = now_ns() - t0;
    samp[ns++] = samp[i];
  }
  for (size_t i = 0; i < ns; i++) { /* suggestd's warm-up */
    const char *q = qs[samp[i]];
    sink += sg_answer(a, q, strlen(q));
  }
  for (int r = 0; r < fts_rounds; r++) {
    long long *tf = t_fts + (size_t)r * scap, *ts = t_sgs + (size_t)r * scap;
    for (size_t i = 0; r > 0 && i < ns; i++) {
      const char *q = qs[samp[i]];
      if (fts_match(q, strlen(q), match, sizeof match)) die("fts match");
      long long t0 = now_ns();
      sink += fts_answer(st, match);
      tf[i] = now_ns() - t0;
    }
    for (size_t i = 0; i < ns; i++) {
      const char *q = qs[samp[i]];
      long long t0 = now_ns();
      sink += sg_answer(a, q, strlen(q));
      ts[i] = now_ns() - t0;
    }
    qsort(tf, ns, sizeof *tf, cmp_ll);
    qsort(ts, ns, sizeof *ts, cmp_ll);
    r_med[r] = ns && ts[ns / 2] ? (double)tf[ns / 2] / (double)ts[ns / 2] : 0;
    r_p99[r] = ns && ts[ns * 99 / 100] ? (double)tf[ns * 99 / 100] / (double)ts[ns * 99 / 100] : 0;
  }
  sqlite3_finalize(st);

  printf("{\"items\":%zu,\"mix\":\"%s\",\"names\":%zu,\"queries\":%zu,\"rounds\":%d,", n, mix,
         names, nq, rounds - 1);
  print_dist("suggestdNs", t_sg, counted);
  /* The round whose median ratio is the median of the rounds' (ties: the first). */
  double *sorted = malloc((size_t)fts_rounds * sizeof *sorted);
  memcpy(sorted, r_med, (size_t)fts_rounds * sizeof *sorted);
  qsort(sorted, (size_t)fts_rounds, sizeof *sorted, cmp_double);
  double ratio_med = sorted[fts_rounds / 2];
  int mid = 0;
  while (r_med[mid] != ratio_med) mid++;
  printf(",\"ftsSample\":%zu,\"ftsRounds\":%d,", ns, fts_rounds);
  print_dist("suggestdSampleNs", t_sgs + (size_t)mid * scap, ns);
  printf(",");
  print_dist("fts5Ns", t_fts + (size_t)mid * scap, ns);
  printf(",\"fts5OverSuggestdMedianRounds\":[");
  for (int r = 0; r < fts_rounds; r++) printf("%s%.1f", r ? "," : "", r_med[r]);
  printf("]");
  memcpy(sorted, r_p99, (size_t)fts_rounds * sizeof *sorted);
  qsort(sorted, (size_t)fts_rounds, sizeof *sorted, cmp_double);
  double ratio_p99 = sorted[fts_rounds / 2];
  printf(",\"typoMix\":{\"queries\":%zu,\"oneEdit\":%zu,\"twoEdits\":%zu,", nt, n1, n2);
  print_dist("exactNoTypoNs", t_e0, nt ? nt : 1);
  printf(",");
  print_dist("exactNs", t_e, nt ? nt : 1);
  printf(",");
  print_dist("typoNs", t_t, nt ? nt : 1);
  printf(",");
  print_dist("typo1Ns", t_t1, n1 ? n1 : 1);
  printf(",");
  print_dist("typo2Ns", t_t2, n2 ? n2 : 1);
  printf("}");
  printf(",\"fts5OverSuggestdMedian\":%.1f,\"fts5OverSuggestdP99\":%.1f,"
         "\"fts5BuildSeconds\":%.2f,\"sink\":%llu}\n",
         ratio_med, ratio_p99, fts_build_s, sink);
  sg_artifact_close(a);
  sqlite3_close(db);
  return 0;
}
