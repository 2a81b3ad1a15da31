/*
 * Process-wide metrics: per-thread request shards, global counters for rare events,
 * collectors, and the Prometheus text exposition (see metrics.h).
 */
#include "common/metrics.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/version.h"

/* ================================================================ routes ========= */

typedef struct {
  sg_listener l;
  char key[128];   /* as registered (a path, or a router pattern with "{}") */
  char label[160]; /* as shown */
} route_ent;

static const char *const listener_names[SG_LISTENER__N] = {"control", "runtime", "metrics"};

/* Ids 0..SG_LISTENER__N-1 are each listener's "other" route. */
static route_ent routes[SG_METRICS_MAX_ROUTES] = {
    {SG_LISTENER_CONTROL, "", "other"},
    {SG_LISTENER_RUNTIME, "", "other"},
    {SG_LISTENER_METRICS, "", "other"},
};
static _Atomic int n_routes = SG_LISTENER__N;
static pthread_mutex_t route_mu = PTHREAD_MUTEX_INITIALIZER;

sg_listener sg_metrics_listener(const char *name) {
  for (int i = 0; name && i < SG_LISTENER__N; i++)
    if (strcmp(name, listener_names[i]) == 0) return (sg_listener)i;
  return SG_LISTENER_CONTROL;
}

const char *sg_metrics_listener_name(sg_listener l) {
  return (unsigned)l < SG_LISTENER__N ? listener_names[l] : "control";
}

/* The name a "{}" parameter takes after segment seg[0..n). */
static const char *param_name(const char *seg, size_t n) {
  static const struct {
    const char *seg, *name;
  } names[] = {{"lists", "{listId}"}, {"items", "{itemId}"}, {"versions", "{versionNumber}"}};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strlen(names[i].seg) == n && memcmp(names[i].seg, seg, n) == 0) return names[i].name;
  return "{id}";
}

/* "/api/v1/lists/{}/items" -> "/api/v1/lists/{listId}/items". Label characters that the
 * exposition would need to escape are replaced, so a label is always printed as is. */
static void make_label(const char *key, char *out, size_t outsz) {
  size_t o = 0;
  const char *prev = key, *prev_end = key;
  for (const char *p = key; *p && o + 1 < outsz;) {
    if (p[0] == '{' && p[1] == '}') {
      const char *name = param_name(prev, (size_t)(prev_end - prev));
      size_t n = strlen(name);
      if (o + n >= outsz) break;
      memcpy(out + o, name, n);
      o += n;
      p += 2;
      continue;
    }
    if (*p == '/') {
      /* Remember the segment that just ended, for the parameter after it. */
      const char *s = p - 1;
      while (s >= key && *s != '/') s--;
      prev = s + 1;
      prev_end = p;
    }
    unsigned char c = (unsigned char)*p++;
    out[o++] = (c < 0x20 || c == '"' || c == '\\' || c >= 0x7f) ? '_' : (char)c;
  }
  out[o] = '\0';
}

int sg_metrics_route(sg_listener l, const char *key) {
  if ((unsigned)l >= SG_LISTENER__N) l = SG_LISTENER_CONTROL;
  if (!key || !*key || strlen(key) >= sizeof routes[0].key) return (int)l;
  int n = atomic_load_explicit(&n_routes, memory_order_acquire);
  for (int i = SG_LISTENER__N; i < n; i++)
    if (routes[i].l == l && strcmp(routes[i].key, key) == 0) return i;
  pthread_mutex_lock(&route_mu);
  n = atomic_load_explicit(&n_routes, memory_order_relaxed);
  int id = (int)l;
  for (int i = SG_LISTENER__N; i < n; i++)
    if (routes[i].l == l && strcmp(routes[i].key, key) == 0) {
      id = i;
      goto out;
    }
  if (n < SG_METRICS_MAX_ROUTES) {
    routes[n].l = l;
    snprintf(routes[n].key, sizeof routes[n].key, "%s", key);
    make_label(key, routes[n].label, sizeof routes[n].label);
    atomic_store_explicit(&n_routes, n + 1, memory_order_release);
    id = n;
  }
out:
  pthread_mutex_unlock(&route_mu);
  return id;
}

const char *sg_metrics_route_label(int route) {
  if (route < 0 || route >= atomic_load_explicit(&n_routes, memory_order_acquire)) return "other";
  return routes[route].label;
}

/* ================================================================ shards ========= */

/* The statuses counted by value, most frequent first; anything else is "other". */
static const unsigned short statuses[] = {
    200, 304, 201, 202, 204, 206, 301, 302, 303, 307, 308, 400, 401, 403, 404, 405, 406, 408, 409,
    410, 411, 412, 413, 414, 415, 416, 417, 422, 426, 428, 429, 431, 500, 501, 502, 503, 504, 505};
#define NSTATUS (sizeof statuses / sizeof *statuses + 1)

/* Request latency bucket bounds: the runtime answers in tens of microseconds, the control
 * plane in milliseconds to seconds (publish, import). */
static const int64_t bucket_us[] = {50,     100,     250,     500,     1000,    2500,
                                    5000,   10000,   25000,   50000,   100000,  250000,
                                    500000, 1000000, 2500000, 5000000, 10000000};
static const char *const bucket_le[] = {"5e-05", "0.0001", "0.00025", "0.0005", "0.001", "0.0025",
                                        "0.005", "0.01",   "0.025",   "0.05",   "0.1",   "0.25",
                                        "0.5",   "1",      "2.5",     "5",      "10"};
#define NBUCKETS (sizeof bucket_us / sizeof *bucket_us)

typedef struct {
  _Atomic uint64_t req[SG_METRICS_MAX_ROUTES][NSTATUS];
  _Atomic uint64_t hist[SG_METRICS_MAX_ROUTES][NBUCKETS + 1]; /* not cumulative; last: +Inf */
  _Atomic uint64_t sum_us[SG_METRICS_MAX_ROUTES];
  _Atomic uint64_t queries;
  _Atomic uint64_t cache_hits;
  _Atomic uint64_t limited[SG_LISTENER__N];
  bool shared; /* the overflow shard: several writers, so it adds atomically */
  bool free;   /* its thread exited: the next new thread takes it over */
} shard;

#define MAX_SHARDS 256

static shard *shards[MAX_SHARDS];
static _Atomic size_t n_shards;
static shard overflow = {.shared = true};
static pthread_mutex_t shard_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static _Thread_local shard *mine;

static void on_thread_exit(void *p) {
  pthread_mutex_lock(&shard_mu);
  ((shard *)p)->free = true;
  pthread_mutex_unlock(&shard_mu);
}

static void make_key(void) {
  if (pthread_key_create(&exit_key, on_thread_exit)) exit_key = (pthread_key_t)-1;
}

/* The calling thread's shard: a released one, a new one, or (registry full, or no
 * memory) the shared overflow shard. The handover goes through shard_mu, so the new
 * owner sees every count the old one stored. */
static shard *my_shard(void) {
  if (mine) return mine;
  pthread_once(&key_once, make_key);
  pthread_mutex_lock(&shard_mu);
  shard *s = NULL;
  size_t n = atomic_load_explicit(&n_shards, memory_order_relaxed);
  for (size_t i = 0; i < n && !s; i++)
    if (shards[i]->free) s = shards[i];
  if (!s && n < MAX_SHARDS && (s = calloc(1, sizeof *s))) {
    shards[n] = s;
    atomic_store_explicit(&n_shards, n + 1, memory_order_release);
  }
  if (s && exit_key != (pthread_key_t)-1 && pthread_setspecific(exit_key, s) == 0) {
    s->free = false;
  } else {
    if (s) s->free = true; /* for a thread that can be told when to release it */
    s = &overflow;         /* shared: a thread that cannot release a shard must not own one */
  }
  pthread_mutex_unlock(&shard_mu);
  mine = s;
  return s;
}

/* Adds v to a counter of shard s. The owner is the only writer of its own shard, so a
 * plain load and store is enough (no locked instruction); the overflow shard adds. */
static inline void add(shard *s, _Atomic uint64_t *c, uint64_t v) {
  if (s->shared)
    atomic_fetch_add_explicit(c, v, memory_order_relaxed);
  else
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
                          memory_order_relaxed);
}

static size_t status_slot(unsigned status) {
  for (size_t i = 0; i < NSTATUS - 1; i++)
    if (statuses[i] == status) return i;
  return NSTATUS - 1;
}

void sg_metrics_http(int route, unsigned status, int64_t us) {
  if (route < 0 || route >= SG_METRICS_MAX_ROUTES) route = 0;
  if (us < 0) us = 0;
  shard *s = my_shard();
  size_t b = 0;
  while (b < NBUCKETS && us > bucket_us[b]) b++;
  add(s, &s->req[route][status_slot(status)], 1);
  add(s, &s->hist[route][b], 1);
  add(s, &s->sum_us[route], (uint64_t)us);
  if (status == 429) add(s, &s->limited[routes[route].l], 1);
}

void sg_metrics_query_served(void) {
  shard *s = my_shard();
  add(s, &s->queries, 1);
}

void sg_metrics_query_cache_hit(void) {
  shard *s = my_shard();
  add(s, &s->cache_hits, 1);
}

/* ================================================================ rare events ==== */

static const char *const publish_states[] = {"active", "draft", "failed", "other"};
#define NPUB (sizeof publish_states / sizeof *publish_states)
static const int64_t pub_bucket_ms[] = {5,    10,   25,    50,    100,   250,    500,   1000,
                                        2500, 5000, 10000, 30000, 60000, 120000, 300000};
static const char *const pub_bucket_le[] = {"0.005", "0.01", "0.025", "0.05", "0.1",
                                            "0.25",  "0.5",  "1",     "2.5",  "5",
                                            "10",    "30",   "60",    "120",  "300"};
#define NPUBBUCKETS (sizeof pub_bucket_ms / sizeof *pub_bucket_ms)

static _Atomic uint64_t pub_hist[NPUB][NPUBBUCKETS + 1];
static _Atomic uint64_t pub_sum_us[NPUB];
static _Atomic uint64_t sel_written, sel_dropped;

void sg_metrics_publish(const char *state, int64_t us) {
  size_t k = 0;
  while (k < NPUB - 1 && (!state || strcmp(state, publish_states[k]) != 0)) k++;
  if (us < 0) us = 0;
  size_t b = 0;
  while (b < NPUBBUCKETS && us > pub_bucket_ms[b] * 1000) b++;
  atomic_fetch_add_explicit(&pub_hist[k][b], 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&pub_sum_us[k], (uint64_t)us, memory_order_relaxed);
}

void sg_metrics_selection_written(uint64_t n) {
  atomic_fetch_add_explicit(&sel_written, n, memory_order_relaxed);
}

void sg_metrics_selection_dropped(uint64_t n) {
  atomic_fetch_add_explicit(&sel_dropped, n, memory_order_relaxed);
}

/* ================================================================ collectors ===== */

#define MAX_COLLECTORS 8

static struct {
  sg_metrics_collector fn;
  void *ctx;
} collectors[MAX_COLLECTORS];
static pthread_mutex_t collector_mu = PTHREAD_MUTEX_INITIALIZER;

int sg_metrics_add_collector(sg_metrics_collector fn, void *ctx) {
  int rc = -1;
  pthread_mutex_lock(&collector_mu);
  for (size_t i = 0; i < MAX_COLLECTORS; i++)
    if (!collectors[i].fn) {
      collectors[i].fn = fn;
      collectors[i].ctx = ctx;
      rc = 0;
      break;
    }
  pthread_mutex_unlock(&collector_mu);
  return rc;
}

void sg_metrics_remove_collector(sg_metrics_collector fn, void *ctx) {
  pthread_mutex_lock(&collector_mu);
  for (size_t i = 0; i < MAX_COLLECTORS; i++)
    if (collectors[i].fn == fn && collectors[i].ctx == ctx) collectors[i].fn = NULL;
  pthread_mutex_unlock(&collector_mu);
}

/* ================================================================ exposition ===== */

void sg_metrics_family(sg_buf *out, const char *name, const char *type, const char *help) {
  sg_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Sums of every shard, taken once per scrape. */
typedef struct {
  uint64_t req[SG_METRICS_MAX_ROUTES][NSTATUS];
  uint64_t hist[SG_METRICS_MAX_ROUTES][NBUCKETS + 1];
  uint64_t sum_us[SG_METRICS_MAX_ROUTES];
  uint64_t queries;
  uint64_t cache_hits;
  uint64_t limited[SG_LISTENER__N];
} totals;

static void sum_shard(totals *t, shard *s) {
  for (size_t r = 0; r < SG_METRICS_MAX_ROUTES; r++) {
    for (size_t k = 0; k < NSTATUS; k++)
      t->req[r][k] += atomic_load_explicit(&s->req[r][k], memory_order_relaxed);
    for (size_t b = 0; b <= NBUCKETS; b++)
      t->hist[r][b] += atomic_load_explicit(&s->hist[r][b], memory_order_relaxed);
    t->sum_us[r] += atomic_load_explicit(&s->sum_us[r], memory_order_relaxed);
  }
  t->queries += atomic_load_explicit(&s->queries, memory_order_relaxed);
  t->cache_hits += atomic_load_explicit(&s->cache_hits, memory_order_relaxed);
  for (size_t l = 0; l < SG_LISTENER__N; l++)
    t->limited[l] += atomic_load_explicit(&s->limited[l], memory_order_relaxed);
}

static void render_http(sg_buf *out, const totals *t, int nr) {
  sg_metrics_family(out, "suggestd_http_requests_total", "counter",
                    "HTTP requests answered, by listener, route template and status.");
  for (int r = 0; r < nr; r++)
    for (size_t k = 0; k < NSTATUS; k++) {
      if (!t->req[r][k]) continue;
      char st[8];
      if (k < NSTATUS - 1)
        snprintf(st, sizeof st, "%u", statuses[k]);
      else
        snprintf(st, sizeof st, "other");
      sg_buf_printf(out,
                    "suggestd_http_requests_total{listener=\"%s\",route=\"%s\",status=\"%s\"} "
                    "%llu\n",
                    listener_names[routes[r].l], routes[r].label, st,
                    (unsigned long long)t->req[r][k]);
    }
  sg_metrics_family(out, "suggestd_http_request_duration_seconds", "histogram",
                    "Time from a request's arrival to its answer, by listener and route template.");
  for (int r = 0; r < nr; r++) {
    uint64_t count = 0;
    for (size_t b = 0; b <= NBUCKETS; b++) count += t->hist[r][b];
    if (!count) continue;
    const char *ln = listener_names[routes[r].l], *rl = routes[r].label;
    uint64_t cum = 0;
    for (size_t b = 0; b < NBUCKETS; b++) {
      cum += t->hist[r][b];
      sg_buf_printf(out,
                    "suggestd_http_request_duration_seconds_bucket{listener=\"%s\",route=\"%s\","
                    "le=\"%s\"} %llu\n",
                    ln, rl, bucket_le[b], (unsigned long long)cum);
    }
    sg_buf_printf(out,
                  "suggestd_http_request_duration_seconds_bucket{listener=\"%s\",route=\"%s\","
                  "le=\"+Inf\"} %llu\n"
                  "suggestd_http_request_duration_seconds_sum{listener=\"%s\",route=\"%s\"} "
                  "%.6f\n"
                  "suggestd_http_request_duration_seconds_count{listener=\"%s\",route=\"%s\"} "
                  "%llu\n",
                  ln, rl, (unsigned long long)count, ln, rl, (double)t->sum_us[r] / 1e6, ln, rl,
                  (unsigned long long)count);
  }
}

static void render_events(sg_buf *out, const totals *t) {
  sg_metrics_family(out, "suggestd_queries_served_total", "counter",
                    "Queries answered from an artifact (billed; not query_too_short, not "
                    "quota_exceeded).");
  sg_buf_printf(out, "suggestd_queries_served_total %llu\n", (unsigned long long)t->queries);
  sg_metrics_family(out, "suggestd_query_cache_hits_total", "counter",
                    "Of those, the queries answered from the runtime's answer cache.");
  sg_buf_printf(out, "suggestd_query_cache_hits_total %llu\n", (unsigned long long)t->cache_hits);
  sg_metrics_family(out, "suggestd_rate_limited_total", "counter",
                    "Answers refused with 429 rate_limited, by listener.");
  for (int l = 0; l < SG_LISTENER_METRICS; l++)
    sg_buf_printf(out, "suggestd_rate_limited_total{listener=\"%s\"} %llu\n", listener_names[l],
                  (unsigned long long)t->limited[l]);
  sg_metrics_family(out, "suggestd_selection_events_written_total", "counter",
                    "Selection events appended to the event log.");
  sg_buf_printf(out, "suggestd_selection_events_written_total %llu\n",
                (unsigned long long)atomic_load(&sel_written));
  sg_metrics_family(out, "suggestd_selection_events_dropped_total", "counter",
                    "Selection events lost: refused because the write queue was full, or not "
                    "written.");
  sg_buf_printf(out, "suggestd_selection_events_dropped_total %llu\n",
                (unsigned long long)atomic_load(&sel_dropped));

  sg_metrics_family(out, "suggestd_publish_duration_seconds", "histogram",
                    "Publish pipeline runs (validate, compile, write, activate), by the state "
                    "the version ended in.");
  for (size_t k = 0; k < NPUB; k++) {
    uint64_t cum = 0, v[NPUBBUCKETS + 1];
    for (size_t b = 0; b <= NPUBBUCKETS; b++) v[b] = atomic_load(&pub_hist[k][b]);
    for (size_t b = 0; b < NPUBBUCKETS; b++) {
      cum += v[b];
      sg_buf_printf(out, "suggestd_publish_duration_seconds_bucket{result=\"%s\",le=\"%s\"} %llu\n",
                    publish_states[k], pub_bucket_le[b], (unsigned long long)cum);
    }
    cum += v[NPUBBUCKETS];
    sg_buf_printf(out,
                  "suggestd_publish_duration_seconds_bucket{result=\"%s\",le=\"+Inf\"} %llu\n"
                  "suggestd_publish_duration_seconds_sum{result=\"%s\"} %.6f\n"
                  "suggestd_publish_duration_seconds_count{result=\"%s\"} %llu\n",
                  publish_states[k], (unsigned long long)cum, publish_states[k],
                  (double)atomic_load(&pub_sum_us[k]) / 1e6, publish_states[k],
                  (unsigned long long)cum);
  }
}

/* Open descriptors, from /proc/self/fd (minus the directory's own). */
static long open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  if (!d) return -1;
  long n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n - 1;
}

static void render_process(sg_buf *out) {
  long fds = open_fds();
  if (fds >= 0) {
    sg_metrics_family(out, "process_open_fds", "gauge", "Open file descriptors.");
    sg_buf_printf(out, "process_open_fds %ld\n", fds);
  }
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    sg_metrics_family(out, "process_max_fds", "gauge", "The file descriptor limit (soft).");
    sg_buf_printf(out, "process_max_fds %llu\n", (unsigned long long)rl.rlim_cur);
  }
  long page = sysconf(_SC_PAGESIZE);
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long long vm = 0, rss = 0;
  if (f) {
    if (fscanf(f, "%llu %llu", &vm, &rss) == 2 && page > 0) {
      sg_metrics_family(out, "process_resident_memory_bytes", "gauge", "Resident memory size.");
      sg_buf_printf(out, "process_resident_memory_bytes %llu\n", rss * (unsigned long long)page);
      sg_metrics_family(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size.");
      sg_buf_printf(out, "process_virtual_memory_bytes %llu\n", vm * (unsigned long long)page);
    }
    fclose(f);
  }
  /* /proc/self/stat: utime and stime (fields 14, 15) and starttime (22) in clock ticks;
   * the command name (field 2) may hold spaces, so parsing starts after its ')'. */
  char buf[1024];
  f = fopen("/proc/self/stat", "r");
  size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  if (f) fclose(f);
  buf[n] = '\0';
  const char *p = strrchr(buf, ')');
  long tck = sysconf(_SC_CLK_TCK);
  unsigned long long ut = 0, stt = 0, start = 0;
  if (p && tck > 0 &&
      sscanf(p + 2,
             "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d %llu",
             &ut, &stt, &start) == 3) {
    sg_metrics_family(out, "process_cpu_seconds_total", "counter", "User and system CPU time.");
    sg_buf_printf(out, "process_cpu_seconds_total %.2f\n", (double)(ut + stt) / (double)tck);
    unsigned long long btime = 0;
    FILE *s = fopen("/proc/stat", "r");
    char line[256];
    while (s && fgets(line, sizeof line, s))
      if (sscanf(line, "btime %llu", &btime) == 1) break;
    if (s) fclose(s);
    if (btime) {
      sg_metrics_family(out, "process_start_time_seconds", "gauge",
                        "Start time of the process since the Unix epoch.");
      sg_buf_printf(out, "process_start_time_seconds %llu\n",
                    btime + start / (unsigned long long)tck);
    }
  }
}

int sg_metrics_render(sg_buf *out) {
  totals *t = calloc(1, sizeof *t);
  if (!t) return -1;
  pthread_mutex_lock(&shard_mu); /* only new shards wait; writers never take it */
  size_t ns = atomic_load(&n_shards);
  for (size_t i = 0; i < ns; i++) sum_shard(t, shards[i]);
  pthread_mutex_unlock(&shard_mu);
  sum_shard(t, &overflow);
  int nr = atomic_load_explicit(&n_routes, memory_order_acquire);

  sg_metrics_family(out, "suggestd_build_info", "gauge", "The running build; always 1.");
  sg_buf_printf(out, "suggestd_build_info{version=\"%s\",revision=\"%s\"} 1\n", sg_version(),
                sg_version_git());
  render_http(out, t, nr);
  render_events(out, t);
  free(t);
  pthread_mutex_lock(&collector_mu);
  for (size_t i = 0; i < MAX_COLLECTORS; i++)
    if (collectors[i].fn) collectors[i].fn(out, collectors[i].ctx);
  pthread_mutex_unlock(&collector_mu);
  render_process(out);
  return 0;
}
