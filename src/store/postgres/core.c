/*
 * PostgreSQL backend: the connection pool, the query and transaction helpers, opening
 * and migrations.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "store/postgres/pg.h"

/* The SQLSTATE of this thread's last failed statement and whether its connection was
 * lost: sg__pg_tx reads them after a body fails to decide between a retry and an answer.
 * Thread-local because each thread runs its own transactions on its own connection. */
static _Thread_local char last_state[6];
static _Thread_local bool last_lost;
/* A transaction in SG__PG_PIPED mode: the BEGIN that sg__pg_pipe sends ahead of the
 * body's first statements (NULL once sent), and whether the body sent its COMMIT. */
static _Thread_local const char *pending_begin;
static _Thread_local bool commit_sent;

static void log_error(const char *what, const char *detail) {
  /* libpq messages end with a newline; JSON logs keep one line per event. */
  char one[512];
  snprintf(one, sizeof one, "%s", detail ? detail : "");
  for (char *p = one; *p; p++)
    if (*p == '\n' || *p == '"' || *p == '\\') *p = ' ';
  fprintf(stderr, "{\"level\":\"error\",\"msg\":\"postgres %s\",\"detail\":\"%s\"}\n", what, one);
}

const char *sg__pg_failed(void) { return last_state; }

static void note_failure(PGconn *c, const PGresult *r) {
  const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
  snprintf(last_state, sizeof last_state, "%s", state ? state : "");
  last_lost = PQstatus(c) == CONNECTION_BAD || (state && strncmp(state, "08", 2) == 0) ||
              (state && (strcmp(state, "57P01") == 0 || strcmp(state, "57P02") == 0 ||
                         strcmp(state, "57P03") == 0));
  /* Expected outcomes that a caller maps to a typed answer are not logged, nor are the
   * refusals of this store's own functions (class SG, schema.c). */
  if (!state ||
      (strcmp(state, "23505") != 0 && strcmp(state, "40001") != 0 && strcmp(state, "40P01") != 0 &&
       strcmp(state, "55P03") != 0 && strncmp(state, "SG", 2) != 0))
    log_error("statement failed", PQerrorMessage(c));
}

PGresult *sg__pg_q(PGconn *c, const char *sql, int n, const char *const *params) {
  PGresult *r = PQexecParams(c, sql, n, NULL, params, NULL, NULL, 0);
  ExecStatusType s = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK) return r;
  note_failure(c, r);
  PQclear(r);
  return NULL;
}

int sg__pg_x(PGconn *c, const char *sql, int n, const char *const *params) {
  PGresult *r = sg__pg_q(c, sql, n, params);
  PQclear(r);
  return r ? 0 : -1;
}

int64_t sg__pg_changed(const PGresult *r) {
  const char *t = PQcmdTuples((PGresult *)r);
  return t && *t ? strtoll(t, NULL, 10) : 0;
}

int sg__pg_at_limit(PGconn *c, const char *sql, const char *parent, int64_t max) {
  const char *p[] = {parent};
  PGresult *r = sg__pg_q(c, sql, 1, p);
  if (!r) return -1;
  int col = sg__pg_col(r, "count");
  int rc = col >= 0 && PQntuples(r) == 1 ? (sg__pg_i(r, 0, col) >= max ? 1 : 0) : -1;
  PQclear(r);
  return rc;
}

const char *sg__pg_s(const PGresult *r, int row, int col) {
  return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}

int64_t sg__pg_i(const PGresult *r, int row, int col) {
  return PQgetisnull(r, row, col) ? 0 : strtoll(PQgetvalue(r, row, col), NULL, 10);
}

int sg__pg_col(const PGresult *r, const char *name) {
  int col = PQfnumber(r, name);
  if (col < 0) log_error("result has no column", name);
  return col;
}

int sg__pg_cols(const PGresult *r, const char *const *names, int *cols, size_t n) {
  int rc = 0;
  for (size_t i = 0; i < n; i++)
    if ((cols[i] = sg__pg_col(r, names[i])) < 0) rc = -1;
  return rc;
}

const char *sg__pg_sn(const PGresult *r, int row, const char *name) {
  int col = sg__pg_col(r, name);
  return col < 0 ? NULL : sg__pg_s(r, row, col);
}

int64_t sg__pg_in(const PGresult *r, int row, const char *name) {
  int col = sg__pg_col(r, name);
  return col < 0 ? 0 : sg__pg_i(r, row, col);
}

static int hexval(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

int sg__pg_bytes(const PGresult *r, int row, int col, uint8_t *out, size_t n) {
  const char *v = sg__pg_s(r, row, col);
  if (!v || strncmp(v, "\\x", 2) != 0 || strlen(v + 2) != 2 * n) return -1;
  for (size_t i = 0; i < n; i++) {
    int hi = hexval(v[2 + 2 * i]), lo = hexval(v[3 + 2 * i]);
    if (hi < 0 || lo < 0) return -1;
    out[i] = (uint8_t)(hi << 4 | lo);
  }
  return 0;
}

const char *sg__pg_bytea(const uint8_t *p, size_t n, char *buf) {
  buf[0] = '\\';
  buf[1] = 'x';
  sg_hex(p, n, buf + 2);
  return buf;
}

const char *sg__pg_int(int64_t v, char buf[24]) {
  snprintf(buf, 24, "%lld", (long long)v);
  return buf;
}

/* The result of the next statement of a pipeline, and the NULL that ends it. */
static PGresult *pipe_result(PGconn *c) {
  PGresult *r = PQgetResult(c);
  if (r) {
    PGresult *end = PQgetResult(c);
    PQclear(end);
  }
  return r;
}

int sg__pg_pipe(PGconn *c, const sg__pg_stmt *s, int n, PGresult **res, bool commit) {
  const char *begin = pending_begin;
  pending_begin = NULL;
  for (int i = 0; i < n; i++) res[i] = NULL;
  if (!PQenterPipelineMode(c)) {
    note_failure(c, NULL);
    return -1;
  }
  bool sent = !begin || PQsendQueryParams(c, begin, 0, NULL, NULL, NULL, NULL, 0);
  for (int i = 0; sent && i < n; i++)
    sent = PQsendQueryParams(c, s[i].sql, s[i].n, NULL, s[i].params, NULL, NULL, 0);
  if (sent && commit) {
    commit_sent = true;
    sent = PQsendQueryParams(c, "COMMIT", 0, NULL, NULL, NULL, NULL, 0);
  }
  if (sent) sent = PQpipelineSync(c);
  int failed = 0;
  /* Results in order: BEGIN's, the statements', COMMIT's, then the Sync's. A statement
   * after a failed one is not run (PGRES_PIPELINE_ABORTED); the first failure is noted. */
  int total = n + (begin ? 1 : 0) + (commit ? 1 : 0);
  for (int k = 0; sent && k < total; k++) {
    PGresult *r = pipe_result(c);
    ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    bool ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
    if (!ok && !failed) note_failure(c, st == PGRES_PIPELINE_ABORTED ? NULL : r);
    if (!ok) failed = 1;
    int i = k - (begin ? 1 : 0);
    if (ok && i >= 0 && i < n) {
      res[i] = r;
    } else {
      PQclear(r);
    }
    if (!r || PQstatus(c) == CONNECTION_BAD) {
      sent = false;
      break;
    }
  }
  if (sent) {
    PGresult *r = PQgetResult(c); /* PGRES_PIPELINE_SYNC */
    if (!r || PQresultStatus(r) != PGRES_PIPELINE_SYNC) sent = false;
    PQclear(r);
  }
  if (!sent || !PQexitPipelineMode(c)) {
    if (!failed) note_failure(c, NULL);
    failed = 1;
  }
  if (failed) {
    for (int i = 0; i < n; i++) {
      PQclear(res[i]);
      res[i] = NULL;
    }
  }
  return failed ? -1 : 0;
}

/* ---- the pool -------------------------------------------------------------------------- */

/* The settings of every pooled session, run on each new connection and again after a
 * PQreset (which opens a fresh session). Times in the schema are plain integers; only the
 * text encoding matters here. The server checks every second whether this client is
 * still there while a statement runs: a control process killed mid-import must not leave
 * its backend applying (and holding the list's row lock) for as long as the statement
 * would have taken. A statement sent without BEGIN (sg__pg_one, sg__pg_read) runs in READ
 * COMMITTED whatever the database's default, as sg__pg_tx's SG__PG_RC does. 0 or -1. */
static int session_setup(PGconn *c) {
  PGresult *r = PQexec(c, "SET client_encoding='UTF8'; SET lock_timeout='30s';"
                          " SET client_connection_check_interval='1s';"
                          " SET default_transaction_isolation='read committed'");
  bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  PQclear(r);
  if (!ok) log_error("session setup", PQerrorMessage(c));
  return ok ? 0 : -1;
}

/* Whether an idle pooled connection is still usable: a server that ended the session
 * while it sat in the pool (a restart, pg_terminate_backend) has sent its FATAL message
 * and closed the socket; reading what is pending, without waiting, finds that out before
 * a statement is sent on it. sg__pg_one relies on it: a statement that runs without BEGIN
 * cannot be retried once it has been sent and the answer is lost. */
static bool conn_alive(PGconn *c) {
  /* The FATAL message and the end of the stream may come in separate reads: read while
   * the socket has something (a few times at most; an idle session gets nothing else). */
  for (int i = 0; i < 4 && PQstatus(c) == CONNECTION_OK; i++) {
    struct pollfd pfd = {.fd = PQsocket(c), .events = POLLIN};
    if (pfd.fd < 0) return false;
    if (poll(&pfd, 1, 0) <= 0) break;
    if (!PQconsumeInput(c)) return false;
    (void)PQisBusy(c); /* parses what was read */
    PGnotify *n;
    while ((n = PQnotifies(c))) PQfreemem(n);
  }
  return PQstatus(c) == CONNECTION_OK;
}

static PGconn *connect_one(const char *conninfo) {
  PGconn *c = PQconnectdb(conninfo);
  if (PQstatus(c) != CONNECTION_OK) {
    log_error("connect", PQerrorMessage(c));
    PQfinish(c);
    return NULL;
  }
  if (session_setup(c)) {
    PQfinish(c);
    return NULL;
  }
  return c;
}

PGconn *sg__pg_acquire(sg__pg *st) {
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += SG__PG_WAIT_MS / 1000;
  pthread_mutex_lock(&st->mu);
  for (;;) {
    int idle = -1, empty = -1;
    for (int i = 0; i < SG__PG_POOL; i++) {
      if (st->busy[i] || st->opening[i]) continue;
      if (st->conns[i] && idle < 0) idle = i;
      if (!st->conns[i] && empty < 0) empty = i;
    }
    if (idle >= 0) {
      st->busy[idle] = true;
      PGconn *c = st->conns[idle];
      pthread_mutex_unlock(&st->mu);
      if (conn_alive(c)) return c;
      /* The server went away since this connection was last used (a restart, a
       * failover: target_session_attrs finds the new primary). */
      PQreset(c);
      if (PQstatus(c) == CONNECTION_OK && session_setup(c) == 0) return c;
      log_error("reconnect", PQerrorMessage(c));
      /* Dropped from the pool: a session without its settings is not reused. */
      pthread_mutex_lock(&st->mu);
      st->conns[idle] = NULL;
      st->busy[idle] = false;
      pthread_cond_signal(&st->cv);
      pthread_mutex_unlock(&st->mu);
      PQfinish(c);
      return NULL;
    }
    if (empty >= 0) {
      st->opening[empty] = true;
      pthread_mutex_unlock(&st->mu);
      PGconn *c = connect_one(st->conninfo);
      pthread_mutex_lock(&st->mu);
      st->opening[empty] = false;
      if (c) {
        st->conns[empty] = c;
        st->busy[empty] = true;
      } else {
        pthread_cond_signal(&st->cv);
      }
      pthread_mutex_unlock(&st->mu);
      return c;
    }
    if (pthread_cond_timedwait(&st->cv, &st->mu, &deadline) == ETIMEDOUT) {
      pthread_mutex_unlock(&st->mu);
      log_error("pool", "every connection stayed busy");
      return NULL;
    }
  }
}

void sg__pg_release(sg__pg *st, PGconn *c) {
  if (!c) return;
  bool drop = PQstatus(c) != CONNECTION_OK;
  if (!drop && PQtransactionStatus(c) != PQTRANS_IDLE) {
    PGresult *r = PQexec(c, "ROLLBACK");
    drop = PQresultStatus(r) != PGRES_COMMAND_OK;
    PQclear(r);
  }
  pthread_mutex_lock(&st->mu);
  for (int i = 0; i < SG__PG_POOL; i++) {
    if (st->conns[i] != c) continue;
    st->busy[i] = false;
    if (drop) st->conns[i] = NULL;
    break;
  }
  pthread_cond_signal(&st->cv);
  pthread_mutex_unlock(&st->mu);
  if (drop) PQfinish(c);
}

/* ---- transactions ---------------------------------------------------------------------- */

static bool retryable(void) {
  return last_lost || strcmp(last_state, "40001") == 0 || strcmp(last_state, "40P01") == 0;
}

/* Sleeps 10·2^attempt ms ± 50 % so that two transactions that collided do not collide
 * again in lockstep. */
static void backoff(int attempt) {
  uint32_t rnd;
  sg_random_bytes(&rnd, sizeof rnd);
  int64_t base = 10LL << attempt;
  int64_t ms = base / 2 + (int64_t)(rnd % (uint32_t)base);
  struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) && errno == EINTR) {}
}

sg_err sg__pg_tx(sg__pg *st, int mode, sg__pg_fn fn, void *ctx) {
  static const char *const begin[] = {
      "BEGIN ISOLATION LEVEL READ COMMITTED",
      "BEGIN ISOLATION LEVEL REPEATABLE READ",
      "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY",
  };
  bool piped = mode & SG__PG_PIPED;
  int unreachable = 0;
  for (int attempt = 0; attempt < SG__PG_ATTEMPTS; attempt++) {
    if (attempt) backoff(attempt);
    PGconn *c = sg__pg_acquire(st);
    if (!c) {
      /* Unreachable (each try may take connect_timeout) or the pool stayed busy: one
       * more try after a backoff, then the caller gets its 503 promptly. */
      if (++unreachable >= 2) return SG_E_UNAVAILABLE;
      continue;
    }
    last_state[0] = '\0';
    last_lost = false;
    commit_sent = false;
    pending_begin = piped ? begin[mode & 3] : NULL;
    sg_err rc;
    if (!piped && sg__pg_x(c, begin[mode & 3], 0, NULL)) {
      rc = SG_E_INTERNAL;
    } else {
      rc = fn(c, ctx);
      pending_begin = NULL;
      if (rc != SG_E_OK && commit_sent && last_lost) {
        /* The body's COMMIT went out with its last statements and no answer came. */
        sg__pg_release(st, c);
        return SG_E_UNAVAILABLE;
      }
      if (rc == SG_E_OK && !commit_sent) {
        PGresult *r = PQexec(c, "COMMIT");
        ExecStatusType s = PQresultStatus(r);
        if (s != PGRES_COMMAND_OK) {
          note_failure(c, r);
          rc = SG_E_INTERNAL;
        }
        PQclear(r);
        if (rc != SG_E_OK && last_lost) {
          /* COMMIT was sent and no answer came: it may have committed. Retrying could
           * apply the write twice, so the caller learns that the outcome is unknown. */
          sg__pg_release(st, c);
          return SG_E_UNAVAILABLE;
        }
      }
    }
    bool again = rc != SG_E_OK && retryable();
    sg__pg_release(st, c);
    if (!again) return rc;
  }
  return SG_E_UNAVAILABLE;
}

/* One statement without BEGIN/COMMIT: PostgreSQL runs it in a transaction of its own
 * that commits when it succeeds, so the statement, its commit and the answer are one
 * round trip (sg__pg_tx spends three on the same work). Retries follow sg__pg_tx's rules
 * with one difference: a statement that was sent is its own COMMIT, so when the
 * connection drops without the server having reported an error the outcome is unknown.
 * Then a read (reads) is run again, a statement that can tell (retry: the parameter it
 * reads as "was this sent before?", set to "true" from the second try on) is run again,
 * and any other write answers SG_E_UNAVAILABLE. An error the server reported (it carries
 * an SQLSTATE, 57P01 for a terminated session included) means the statement's
 * transaction was rolled back, so it is retried when retryable() says so. */
static PGresult *run_one(sg__pg *st, bool reads, const char *sql, int n, const char **params,
                         int retry, sg_err *rc) {
  int unreachable = 0;
  for (int attempt = 0; attempt < SG__PG_ATTEMPTS; attempt++) {
    if (attempt) backoff(attempt);
    PGconn *c = sg__pg_acquire(st);
    if (!c) {
      if (++unreachable >= 2) break;
      continue;
    }
    last_state[0] = '\0';
    last_lost = false;
    PGresult *r = sg__pg_q(c, sql, n, params);
    bool unknown = !r && last_lost && !last_state[0];
    if (unknown && retry >= 0) params[retry] = "true";
    bool again = !r && retryable() && !(unknown && !reads && retry < 0);
    sg__pg_release(st, c);
    if (r) {
      *rc = SG_E_OK;
      return r;
    }
    if (!again) {
      *rc = unknown ? SG_E_UNAVAILABLE : SG_E_INTERNAL;
      return NULL;
    }
  }
  *rc = SG_E_UNAVAILABLE;
  return NULL;
}

PGresult *sg__pg_one(sg__pg *st, const char *sql, int n, const char *const *params, sg_err *rc) {
  return run_one(st, false, sql, n, (const char **)params, -1, rc);
}

PGresult *sg__pg_read(sg__pg *st, const char *sql, int n, const char *const *params, sg_err *rc) {
  return run_one(st, true, sql, n, (const char **)params, -1, rc);
}

PGresult *sg__pg_one_again(sg__pg *st, const char *sql, int n, const char **params, int retry,
                           sg_err *rc) {
  return run_one(st, false, sql, n, params, retry, rc);
}

/* ---- opening and migrations -------------------------------------------------------------- */

/* Every process that migrates takes this advisory lock (inside each migration's
 * transaction), so processes starting at once apply each migration exactly once. */
#define MIGRATION_LOCK "7430298411"

static int migrate(PGconn *c, char *err, size_t errsz) {
  static const char q_table[] =
      "CREATE TABLE IF NOT EXISTS sg_migrations(version INTEGER PRIMARY KEY,"
      " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())";
  int n = 0;
  while (sg__pg_migrations[n]) n++;
  for (int v = 0; v <= n; v++) {
    char ver[24];
    const char *p[] = {sg__pg_int(v, ver)};
    if (sg__pg_x(c, "BEGIN", 0, NULL) ||
        sg__pg_x(c, "SELECT pg_advisory_xact_lock(" MIGRATION_LOCK ")", 0, NULL) ||
        sg__pg_x(c, q_table, 0, NULL))
      goto fail;
    PGresult *r =
        sg__pg_q(c, "SELECT COALESCE(MAX(version), 0) AS have FROM sg_migrations", 0, NULL);
    if (!r) goto fail;
    int hc = sg__pg_col(r, "have");
    int64_t have = hc < 0 ? -1 : sg__pg_i(r, 0, hc);
    PQclear(r);
    if (have < 0) goto fail;
    if (have > n) {
      snprintf(err, errsz, "database schema %lld is newer than this binary (%d)", (long long)have,
               n);
      sg__pg_x(c, "ROLLBACK", 0, NULL);
      return -1;
    }
    if (v > 0 && have < v) {
      /* A migration is several statements: the simple query protocol runs them all. */
      PGresult *m = PQexec(c, sg__pg_migrations[v - 1]);
      bool ok = PQresultStatus(m) == PGRES_COMMAND_OK;
      PQclear(m);
      if (!ok || sg__pg_x(c, "INSERT INTO sg_migrations(version) VALUES($1::integer)", 1, p))
        goto fail;
    }
    if (sg__pg_x(c, "COMMIT", 0, NULL)) goto fail;
  }
  return 0;
fail:
  snprintf(err, errsz, "migration failed: %s", PQerrorMessage(c));
  PGresult *r = PQexec(c, "ROLLBACK");
  PQclear(r);
  return -1;
}

/* The URL with the options a store needs added unless the user set them:
 * target_session_attrs=read-write (with several hosts, connect to the primary, so a
 * failover is a reconnect) and connect_timeout=5 (an unreachable host fails fast). */
static char *conninfo_of(const char *url, char *err, size_t errsz) {
  char *msg = NULL;
  PQconninfoOption *opts = PQconninfoParse(url, &msg);
  if (!opts) {
    snprintf(err, errsz, "bad PostgreSQL URL: %s", msg ? msg : "unparsable");
    PQfreemem(msg);
    return NULL;
  }
  bool has_tsa = false, has_timeout = false;
  for (PQconninfoOption *o = opts; o->keyword; o++) {
    if (!o->val) continue;
    if (strcmp(o->keyword, "target_session_attrs") == 0) has_tsa = true;
    if (strcmp(o->keyword, "connect_timeout") == 0) has_timeout = true;
  }
  PQconninfoFree(opts);
  size_t len = strlen(url) + 96;
  char *out = malloc(len);
  if (!out) return NULL;
  const char *sep = strchr(url, '?') ? "&" : "?";
  snprintf(out, len, "%s", url);
  if (!has_tsa) {
    strcat(out, sep);
    strcat(out, "target_session_attrs=read-write");
    sep = "&";
  }
  if (!has_timeout) {
    strcat(out, sep);
    strcat(out, "connect_timeout=5");
  }
  return out;
}

int sg__pg_open(const char *url, sg_store **out, char *err, size_t errsz) {
  char *conninfo = conninfo_of(url, err, errsz);
  if (!conninfo) return -1;
  PGconn *c = PQconnectdb(conninfo);
  if (PQstatus(c) != CONNECTION_OK) {
    snprintf(err, errsz, "cannot connect to PostgreSQL: %s", PQerrorMessage(c));
    for (char *p = err; *p; p++)
      if (*p == '\n') *p = ' ';
    PQfinish(c);
    free(conninfo);
    return -1;
  }
  PGresult *r = PQexec(c, "SET client_min_messages=warning");
  PQclear(r);
  if (migrate(c, err, errsz)) {
    PQfinish(c);
    free(conninfo);
    return -1;
  }
  PQfinish(c);
  sg__pg *st = calloc(1, sizeof *st);
  if (!st) {
    free(conninfo);
    return -1;
  }
  st->conninfo = conninfo;
  /* "<host> <pid> <start> <random>": the process part lets a store on the same host see
   * a dead owner at once (as SQLite does); the random part keeps two stores of one
   * process apart. */
  char rnd[24];
  sg_random_id("", rnd, sizeof rnd);
  snprintf(st->owner, sizeof st->owner, "%s %s", sg__store_self_owner(), rnd);
  pthread_mutex_init(&st->mu, NULL);
  pthread_cond_init(&st->cv, NULL);
  pthread_mutex_init(&st->listen_mu, NULL);
  st->base.ops = &sg__pg_store_ops;
  *out = &st->base;
  return 0;
}

void sg__pg_close(sg_store *base) {
  sg__pg *st = sg__pg_of(base);
  if (!st) return;
  for (int i = 0; i < SG__PG_POOL; i++) PQfinish(st->conns[i]);
  PQfinish(st->listen);
  pthread_mutex_destroy(&st->listen_mu);
  pthread_mutex_destroy(&st->mu);
  pthread_cond_destroy(&st->cv);
  free(st->conninfo);
  free(st);
}

/* PostgreSQL checkpoints on its own; the SQLite WAL truncation this stands for has no
 * counterpart. */
sg_err sg__pg_checkpoint(sg_store *st) {
  (void)st;
  return SG_E_OK;
}

typedef struct {
  const char *name;
  uint8_t *out;
} secret_ctx;

static sg_err secret_fn(PGconn *c, void *vctx) {
  secret_ctx *x = vctx;
  uint8_t fresh[32];
  char hex[68];
  sg_random_bytes(fresh, sizeof fresh);
  const char *p[] = {x->name, sg__pg_bytea(fresh, 32, hex)};
  if (sg__pg_x(c, "INSERT INTO meta(name, value) VALUES($1, $2::bytea) ON CONFLICT DO NOTHING", 2,
               p))
    return SG_E_INTERNAL;
  PGresult *r = sg__pg_q(c, "SELECT value FROM meta WHERE name=$1", 1, p);
  if (!r) return SG_E_INTERNAL;
  int col = sg__pg_col(r, "value");
  int bad = col < 0 || PQntuples(r) != 1 || sg__pg_bytes(r, 0, col, x->out, 32);
  PQclear(r);
  return bad ? SG_E_INTERNAL : SG_E_OK;
}

sg_err sg__pg_secret(sg_store *base, const char *name, uint8_t out[32]) {
  secret_ctx x = {name, out};
  return sg__pg_tx(sg__pg_of(base), SG__PG_RC, secret_fn, &x);
}

/* Takes every notification libpq has read; true when there was one. */
static bool drain_notifies(PGconn *c) {
  bool any = false;
  PGnotify *n;
  while ((n = PQnotifies(c))) {
    any = true;
    PQfreemem(n);
  }
  return any;
}

sg_err sg__pg_wait_work(sg_store *base, int timeout_ms) {
  sg__pg *st = sg__pg_of(base);
  sg_err rc = SG_E_NOT_FOUND;
  pthread_mutex_lock(&st->listen_mu);
  if (!st->listen || PQstatus(st->listen) != CONNECTION_OK) {
    PQfinish(st->listen);
    st->listen = connect_one(st->conninfo);
    PGresult *r = st->listen ? PQexec(st->listen, "LISTEN sg_publish") : NULL;
    bool ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!ok) {
      PQfinish(st->listen);
      st->listen = NULL;
      rc = SG_E_UNAVAILABLE;
      goto out;
    }
    /* Announcements sent while nobody listened are lost: report one, so the caller
     * looks at the queue once. */
    rc = SG_E_OK;
    goto out;
  }
  if (PQconsumeInput(st->listen) && drain_notifies(st->listen)) {
    rc = SG_E_OK;
    goto out;
  }
  struct pollfd pfd = {.fd = PQsocket(st->listen), .events = POLLIN};
  if (pfd.fd >= 0 && poll(&pfd, 1, timeout_ms) > 0) {
    if (!PQconsumeInput(st->listen))
      rc = SG_E_UNAVAILABLE; /* the next call reconnects */
    else if (drain_notifies(st->listen))
      rc = SG_E_OK;
  }
out:
  pthread_mutex_unlock(&st->listen_mu);
  return rc;
}
