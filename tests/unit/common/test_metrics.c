/* Unit tests of the process-wide metrics (src/common/metrics.c): route labels, per-thread
 * shards summed across threads (including threads that exited), histogram shape and the
 * syntax of every exposition line. The registry is process-wide, so each test reads a
 * value before and after and checks the difference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/metrics.h"

/* The value of the sample whose line starts with `series` (name and labels exactly),
 * or -1 when absent. */
static double sample(const char *series) {
  sg_buf b;
  sg_buf_init(&b, 0);
  assert_int_equal(sg_metrics_render(&b), 0);
  double v = -1;
  size_t n = strlen(series);
  for (const char *p = b.data; p && *p;) {
    const char *nl = strchr(p, '\n');
    if (strncmp(p, series, n) == 0 && p[n] == ' ') {
      v = strtod(p + n + 1, NULL);
      break;
    }
    p = nl ? nl + 1 : NULL;
  }
  sg_buf_free(&b);
  return v < 0 ? 0 : v;
}

static void test_route_labels(void **state) {
  (void)state;
  int a = sg_metrics_route(SG_LISTENER_CONTROL, "/api/v1/lists/{}/items/{}");
  assert_string_equal(sg_metrics_route_label(a), "/api/v1/lists/{listId}/items/{itemId}");
  assert_int_equal(sg_metrics_route(SG_LISTENER_CONTROL, "/api/v1/lists/{}/items/{}"), a);
  int v = sg_metrics_route(SG_LISTENER_CONTROL, "/api/v1/lists/{}/versions/{}");
  assert_string_equal(sg_metrics_route_label(v), "/api/v1/lists/{listId}/versions/{versionNumber}");
  /* The same path on another listener is another series. */
  int r = sg_metrics_route(SG_LISTENER_RUNTIME, "/healthz");
  int c = sg_metrics_route(SG_LISTENER_CONTROL, "/healthz");
  assert_int_not_equal(r, c);
  /* No route: the listener's "other". */
  assert_string_equal(sg_metrics_route_label(sg_metrics_route(SG_LISTENER_RUNTIME, NULL)), "other");
  assert_string_equal(sg_metrics_route_label(-5), "other");
  /* A label never carries a character the exposition would have to escape. */
  int q = sg_metrics_route(SG_LISTENER_METRICS, "/a\"b\\c");
  assert_string_equal(sg_metrics_route_label(q), "/a_b_c");
}

static void test_counts_and_histogram(void **state) {
  (void)state;
  int id = sg_metrics_route(SG_LISTENER_RUNTIME, "/test/hist");
  const char *base = "listener=\"runtime\",route=\"/test/hist\"";
  char s200[160], s404[160], b100[160], b1k[160], binf[160], cnt[160], sum[160];
  snprintf(s200, sizeof s200, "suggestd_http_requests_total{%s,status=\"200\"}", base);
  snprintf(s404, sizeof s404, "suggestd_http_requests_total{%s,status=\"404\"}", base);
  snprintf(b100, sizeof b100, "suggestd_http_request_duration_seconds_bucket{%s,le=\"0.0001\"}",
           base);
  snprintf(b1k, sizeof b1k, "suggestd_http_request_duration_seconds_bucket{%s,le=\"0.001\"}", base);
  snprintf(binf, sizeof binf, "suggestd_http_request_duration_seconds_bucket{%s,le=\"+Inf\"}",
           base);
  snprintf(cnt, sizeof cnt, "suggestd_http_request_duration_seconds_count{%s}", base);
  snprintf(sum, sizeof sum, "suggestd_http_request_duration_seconds_sum{%s}", base);
  sg_metrics_http(id, 200, 80);       /* <= 100 us */
  sg_metrics_http(id, 200, 100);      /* the bound itself is inside its bucket */
  sg_metrics_http(id, 404, 900);      /* <= 1 ms */
  sg_metrics_http(id, 200, 60000000); /* over the last bound: +Inf only */
  assert_true(sample(s200) == 3);
  assert_true(sample(s404) == 1);
  assert_true(sample(b100) == 2);
  assert_true(sample(b1k) == 3);
  assert_true(sample(binf) == 4);
  assert_true(sample(cnt) == 4);
  double sm = sample(sum);
  assert_true(sm > 60.0010 && sm < 60.0011);
}

static void test_rate_limited_follows_429(void **state) {
  (void)state;
  const char *s = "suggestd_rate_limited_total{listener=\"control\"}";
  double before = sample(s);
  int id = sg_metrics_route(SG_LISTENER_CONTROL, "/test/limited");
  sg_metrics_http(id, 429, 10);
  sg_metrics_http(id, 200, 10);
  assert_true(sample(s) == before + 1);
}

/* ---- threads -------------------------------------------------------------------------- */

#define PER_THREAD 20000

static void *count_queries(void *arg) {
  int id = *(int *)arg;
  for (int i = 0; i < PER_THREAD; i++) {
    sg_metrics_http(id, 200, i % 3000);
    sg_metrics_query_served();
  }
  return NULL;
}

static void test_threads_sum_and_survive_exit(void **state) {
  (void)state;
  int id = sg_metrics_route(SG_LISTENER_RUNTIME, "/test/threads");
  const char *s = "suggestd_http_requests_total{listener=\"runtime\",route=\"/test/threads\","
                  "status=\"200\"}";
  double q0 = sample("suggestd_queries_served_total");
  /* Three waves of threads: later waves take over the shards of exited threads, and the
   * totals must include every wave. */
  for (int wave = 1; wave <= 3; wave++) {
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
      assert_int_equal(pthread_create(&t[i], NULL, count_queries, &id), 0);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    assert_true(sample(s) == (double)wave * 4 * PER_THREAD);
  }
  assert_true(sample("suggestd_queries_served_total") == q0 + 12 * PER_THREAD);
}

/* ---- the exposition's syntax --------------------------------------------------------- */

static bool name_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
         (!first && c >= '0' && c <= '9');
}

/* Checks one sample line: name, optional {k="v",…}, one space, a number. */
static bool sample_line_ok(const char *p, const char *end) {
  if (p == end || !name_char(*p, true)) return false;
  while (p < end && name_char(*p, false)) p++;
  if (p < end && *p == '{') {
    p++;
    for (;;) {
      if (!name_char(*p, true)) return false;
      while (p < end && name_char(*p, false)) p++;
      if (p + 1 >= end || p[0] != '=' || p[1] != '"') return false;
      p += 2;
      while (p < end && *p != '"') {
        if (*p == '\\' || *p == '\n') return false;
        p++;
      }
      if (p >= end) return false;
      p++;
      if (*p == ',') {
        p++;
        continue;
      }
      if (*p != '}') return false;
      p++;
      break;
    }
  }
  if (p >= end || *p != ' ') return false;
  p++;
  char num[64];
  size_t n = (size_t)(end - p);
  if (n == 0 || n >= sizeof num) return false;
  memcpy(num, p, n);
  num[n] = '\0';
  char *e;
  strtod(num, &e);
  return *e == '\0';
}

static void test_exposition_syntax(void **state) {
  (void)state;
  sg_metrics_http(sg_metrics_route(SG_LISTENER_CONTROL, "/api/v1/lists/{}"), 200, 1234);
  sg_metrics_publish("active", 12000);
  sg_metrics_publish("nonsense", 1);
  sg_buf b;
  sg_buf_init(&b, 0);
  assert_int_equal(sg_metrics_render(&b), 0);
  assert_true(b.len > 0 && b.data[b.len - 1] == '\n');
  size_t samples = 0;
  char typed[64][96];
  size_t ntyped = 0;
  for (const char *p = b.data; *p;) {
    const char *nl = strchr(p, '\n');
    assert_non_null(nl);
    if (strncmp(p, "# TYPE ", 7) == 0) {
      /* A family is declared once. */
      char name[96];
      assert_int_equal(sscanf(p + 7, "%95s", name), 1);
      for (size_t i = 0; i < ntyped; i++) assert_string_not_equal(typed[i], name);
      if (ntyped < 64) snprintf(typed[ntyped++], sizeof typed[0], "%s", name);
    } else if (strncmp(p, "# HELP ", 7) != 0) {
      if (!sample_line_ok(p, nl)) fail_msg("bad line: %.*s", (int)(nl - p), p);
      samples++;
    }
    p = nl + 1;
  }
  assert_true(samples > 20);
  assert_true(sample("suggestd_publish_duration_seconds_count{result=\"active\"}") >= 1);
  assert_true(sample("suggestd_publish_duration_seconds_bucket{result=\"active\",le=\"0.01\"}") ==
              0);
  assert_true(sample("suggestd_publish_duration_seconds_bucket{result=\"active\",le=\"0.025\"}") ==
              1);
  assert_true(sample("suggestd_publish_duration_seconds_count{result=\"other\"}") >= 1);
  sg_buf_free(&b);
}

static int collected;
static void collector(sg_buf *out, void *ctx) {
  collected++;
  sg_metrics_family(out, "test_collector_value", "gauge", "A test value.");
  sg_buf_printf(out, "test_collector_value %d\n", *(int *)ctx);
}

static void test_collectors(void **state) {
  (void)state;
  int v = 42;
  assert_int_equal(sg_metrics_add_collector(collector, &v), 0);
  assert_true(sample("test_collector_value") == 42);
  sg_metrics_remove_collector(collector, &v);
  int before = collected;
  assert_true(sample("test_collector_value") == 0);
  assert_int_equal(collected, before);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_route_labels),
      cmocka_unit_test(test_counts_and_histogram),
      cmocka_unit_test(test_rate_limited_follows_429),
      cmocka_unit_test(test_threads_sum_and_survive_exit),
      cmocka_unit_test(test_exposition_syntax),
      cmocka_unit_test(test_collectors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
