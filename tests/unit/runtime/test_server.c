/* The runtime's epoll server (src/runtime/server.c, loop.c): connections spread over the workers
 * are all tracked, answered, and closed and freed when the runtime stops (the ASan run
 * of this test reports any connection left behind). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/util.h"
#include "edge/edge.h"
#include "runtime/rt.h"
#include "runtime/runtime.h"

#define N_CONNS 24

static int dial(unsigned port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(fd >= 0);
  struct timeval tv = {.tv_sec = 5};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
  return fd;
}

/* Reads one whole answer (headers + Content-Length body) or fails the test. */
static void read_answer(int fd, char *buf, size_t cap) {
  size_t len = 0;
  for (;;) {
    ssize_t n = recv(fd, buf + len, cap - 1 - len, 0);
    assert_true(n > 0);
    len += (size_t)n;
    buf[len] = '\0';
    char *end = strstr(buf, "\r\n\r\n");
    char *cl = strstr(buf, "Content-Length: ");
    if (end && cl && len >= (size_t)(end + 4 - buf) + strtoul(cl + 16, NULL, 10)) return;
  }
}

static void test_connections_answered_then_closed_on_stop(void **state) {
  char tmpl[] = "/tmp/sg-server-XXXXXX";
  char *dir = mkdtemp(tmpl);
  assert_non_null(dir);
  char edge[256], st[256];
  snprintf(edge, sizeof edge, "%s/edge", dir);
  snprintf(st, sizeof st, "%s/state", dir);
  assert_int_equal(sg_mkdirs(edge, 0755), 0);
  sg_runtime_config cfg = {.listen = "127.0.0.1:0", .edge = edge, .state_dir = st, .threads = 3};
  sg_runtime *rt = NULL;
  assert_int_equal(sg_runtime_start(&cfg, &rt), 0);
  unsigned port = sg_runtime_port(rt);
  assert_true(port > 0);

  /* Many connections, opened one after another so the workers accept them in turns; each
   * is answered on its keep-alive connection. */
  int fds[N_CONNS];
  char buf[4096];
  static const char req[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  for (int i = 0; i < N_CONNS; i++) {
    fds[i] = dial(port);
    assert_int_equal(send(fds[i], req, sizeof req - 1, 0), (ssize_t)(sizeof req - 1));
    read_answer(fds[i], buf, sizeof buf);
    assert_memory_equal(buf, "HTTP/1.1 200 OK\r\n", 17);
    assert_non_null(strstr(buf, "{\"status\":\"ok\"}"));
  }
  /* Each connection is still open and still served. */
  for (int i = 0; i < N_CONNS; i++) {
    assert_int_equal(send(fds[i], req, sizeof req - 1, 0), (ssize_t)(sizeof req - 1));
    read_answer(fds[i], buf, sizeof buf);
    assert_memory_equal(buf, "HTTP/1.1 200 OK\r\n", 17);
  }

  /* Stopping closes every one of them: each client sees end-of-file, none a timeout. */
  sg_runtime_stop(rt);
  for (int i = 0; i < N_CONNS; i++) {
    ssize_t n = recv(fds[i], buf, sizeof buf, 0);
    assert_int_equal(n, 0);
    close(fds[i]);
  }
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

/* At the connection cap a newcomer is served: the oldest connection that owes its client
 * nothing (here, heads that never finish, then idle keep-alive connections) is closed to
 * make room, by the worker that holds it — the accepting worker's own, or another's
 * through its inbox when the accepting worker has none (with 4 workers and 3 slots, at
 * least one worker always has none). The cap itself is never exceeded. */
#define CAP 3
#define ROUNDS 40
static void test_cap_evicts_the_oldest_connection_that_owes_nothing(void **state) {
  char tmpl[] = "/tmp/sg-server-XXXXXX";
  char *dir = mkdtemp(tmpl);
  assert_non_null(dir);
  char edge[256], st[256];
  snprintf(edge, sizeof edge, "%s/edge", dir);
  snprintf(st, sizeof st, "%s/state", dir);
  assert_int_equal(sg_mkdirs(edge, 0755), 0);
  sg_runtime_config cfg = {
      .listen = "127.0.0.1:0", .edge = edge, .state_dir = st, .threads = 4, .max_connections = CAP};
  sg_runtime *rt = NULL;
  assert_int_equal(sg_runtime_start(&cfg, &rt), 0);
  unsigned port = sg_runtime_port(rt);
  char buf[4096];
  static const char part[] = "GET /healthz HTTP/1.1\r\nHo";
  static const char req[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  int hogs[CAP];
  for (int i = 0; i < CAP; i++) {
    hogs[i] = dial(port);
    assert_int_equal(send(hogs[i], part, sizeof part - 1, 0), (ssize_t)(sizeof part - 1));
    usleep(20000); /* accepted in this order, so hogs[0] is the oldest */
  }
  int fresh[ROUNDS];
  for (int i = 0; i < ROUNDS; i++) {
    fresh[i] = dial(port);
    assert_int_equal(send(fresh[i], req, sizeof req - 1, 0), (ssize_t)(sizeof req - 1));
    read_answer(fresh[i], buf, sizeof buf);
    assert_memory_equal(buf, "HTTP/1.1 200 OK\r\n", 17);
    assert_true(atomic_load(&rt->connections) <= CAP);
  }
  /* Every hog went first (all were older than every newcomer); the newest connections
   * are still open and served. */
  for (int i = 0; i < CAP; i++) {
    ssize_t n = recv(hogs[i], buf, sizeof buf, 0);
    assert_true(n <= 0);
    close(hogs[i]);
  }
  for (int i = ROUNDS - CAP + 1; i < ROUNDS; i++) {
    assert_int_equal(send(fresh[i], req, sizeof req - 1, 0), (ssize_t)(sizeof req - 1));
    read_answer(fresh[i], buf, sizeof buf);
    assert_memory_equal(buf, "HTTP/1.1 200 OK\r\n", 17);
  }
  sg_runtime_stop(rt);
  for (int i = 0; i < ROUNDS; i++) close(fresh[i]);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

/* The revision the runtime serves, read as a request would (inside the epoch scheme). */
static uint64_t served_revision(sg_runtime *rt) {
  const sg__rt_snapshot *s = sg__rcu_enter(&rt->rcu);
  uint64_t r = s->revision;
  sg__rcu_leave(&rt->rcu);
  return r;
}

/* A directory edge wakes the loader when its revision moves: with a poll period of 30 s
 * a record written to the edge is served within a moment, not at the next poll; and the
 * runtime still stops at once (the wait ends on the stop, not at the poll period). */
static void test_directory_edge_change_wakes_the_loader(void **state) {
  char tmpl[] = "/tmp/sg-server-XXXXXX";
  char *dir = mkdtemp(tmpl);
  assert_non_null(dir);
  char edge[256], st[256];
  snprintf(edge, sizeof edge, "%s/edge", dir);
  snprintf(st, sizeof st, "%s/state", dir);
  assert_int_equal(sg_mkdirs(edge, 0755), 0);
  sg_edge *e = NULL;
  assert_int_equal(sg_edge_open(edge, &e), 0);
  sg_runtime_config cfg = {
      .listen = "127.0.0.1:0", .edge = edge, .state_dir = st, .threads = 1, .poll_ms = 30000};
  sg_runtime *rt = NULL;
  assert_int_equal(sg_runtime_start(&cfg, &rt), 0);
  /* Give the loader time to enter its first wait. */
  usleep(200 * 1000);
  for (int round = 0; round < 3; round++) {
    uint64_t rev = 0;
    static const char ws[] = "{\"id\":\"wsp_1\",\"status\":\"active\"}";
    assert_int_equal(sg_edge_put(e, SG_EDGE_WORKSPACE, "wsp_1", ws, sizeof ws - 1, &rev), 0);
    int64_t t0 = sg_mono_ms();
    while (served_revision(rt) < rev && sg_mono_ms() - t0 < 5000) usleep(5 * 1000);
    assert_true(served_revision(rt) >= rev);
    assert_true(sg_mono_ms() - t0 < 5000);
  }
  int64_t t0 = sg_mono_ms();
  sg_runtime_stop(rt);
  assert_true(sg_mono_ms() - t0 < 5000);
  sg_edge_close(e);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  if (sg_init()) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_connections_answered_then_closed_on_stop),
      cmocka_unit_test(test_cap_evicts_the_oldest_connection_that_owes_nothing),
      cmocka_unit_test(test_directory_edge_change_wakes_the_loader),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
