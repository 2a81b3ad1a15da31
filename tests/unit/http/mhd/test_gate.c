/* The control listener's front gate (src/http/mhd/gate.c) on real loopback sockets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "http/mhd/gate.h"

/* What the gate handed over, for the test thread to look at. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int handed[16];
static size_t nhanded;

static int hand_over(void *ctx, int fd, const struct sockaddr *sa, socklen_t sl) {
  pthread_mutex_lock(&mu);
  if (nhanded < 16)
    handed[nhanded++] = fd;
  else
    close(fd);
  pthread_mutex_unlock(&mu);
  return 0;
}

static size_t too_large(void *ctx, char *buf, size_t cap) {
  static const char r[] = "HTTP/1.1 431 X\r\nContent-Length: 2\r\n\r\n{}";
  memcpy(buf, r, sizeof r - 1);
  return sizeof r - 1;
}

typedef struct {
  sg__gate *g;
  unsigned port;
} fixture;

static int setup(void **state) {
  static fixture f;
  static sg_trusted_proxies trusted; /* a reverse proxy: exempt from the per-IP cap */
  char err[128];
  assert_int_equal(sg_trusted_proxies_parse("127.0.0.3/32", &trusted, err, sizeof err), 0);
  nhanded = 0;
  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t al = sizeof a;
  assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof a), 0);
  assert_int_equal(listen(lfd, 64), 0);
  assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &al), 0);
  f.port = ntohs(a.sin_port);
  sg__gate_config cfg = {
      .listen_fd = lfd,
      .max_connections = 6,
      .max_per_ip = 3,
      .trusted = &trusted,
      .head_timeout_ms = 400,
      .head_max = 64,
      .head_max_fields = 3,
      .hand_over = hand_over,
      .too_large = too_large,
  };
  assert_int_equal(sg__gate_start(&cfg, &f.g), 0);
  *state = &f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  sg__gate_free(f->g);
  for (size_t i = 0; i < nhanded; i++) close(handed[i]);
  return 0;
}

static int dial(unsigned port, const char *source) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in src = {.sin_family = AF_INET};
  inet_pton(AF_INET, source, &src.sin_addr);
  assert_int_equal(bind(fd, (struct sockaddr *)&src, sizeof src), 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
  return fd;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static size_t handed_count(void) {
  pthread_mutex_lock(&mu);
  size_t n = nhanded;
  pthread_mutex_unlock(&mu);
  return n;
}

static size_t wait_handed(size_t want) {
  for (int i = 0; i < 200 && handed_count() < want; i++) sleep_ms(5);
  return handed_count();
}

/* True when the peer closed fd within ms (EOF or reset). */
static bool closed_within(int fd, int ms) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  if (poll(&p, 1, ms) != 1) return false;
  char b[256];
  return recv(fd, b, sizeof b, MSG_DONTWAIT) <= 0;
}

static void test_head_in_pieces_is_handed_over_unread(void **state) {
  fixture *f = *state;
  int c = dial(f->port, "127.0.0.1");
  const char *parts[] = {"GET / HTTP/1.1\r", "\nHost: x\r\n", "\r", "\nbody"};
  for (size_t i = 0; i < 4; i++) {
    assert_int_equal(handed_count(), 0);
    assert_int_equal(send(c, parts[i], strlen(parts[i]), 0), (ssize_t)strlen(parts[i]));
    sleep_ms(30);
  }
  assert_int_equal(wait_handed(1), 1);
  /* Nothing was consumed: the server reads the request from its first byte. */
  char buf[128];
  ssize_t n = recv(handed[0], buf, sizeof buf - 1, 0);
  assert_true(n > 0);
  buf[n] = '\0';
  assert_string_equal(buf, "GET / HTTP/1.1\r\nHost: x\r\n\r\nbody");
  close(c);
}

static void test_bare_lf_head(void **state) {
  fixture *f = *state;
  int c = dial(f->port, "127.0.0.1");
  send(c, "GET / HTTP/1.0\n\n", 16, 0);
  assert_int_equal(wait_handed(1), 1);
  close(c);
}

static void test_leading_empty_lines_are_not_a_head(void **state) {
  fixture *f = *state;
  int c = dial(f->port, "127.0.0.1");
  send(c, "\r\n\r\n\n", 5, 0);
  sleep_ms(100);
  assert_int_equal(handed_count(), 0);
  send(c, "GET / HTTP/1.1\r\n\r\n", 18, 0);
  assert_int_equal(wait_handed(1), 1);
  close(c);
}

static void test_oversized_head_is_answered_and_closed(void **state) {
  fixture *f = *state;
  int c = dial(f->port, "127.0.0.1");
  char big[200];
  memset(big, 'a', sizeof big);
  send(c, big, sizeof big, 0);
  char buf[256];
  ssize_t n = recv(c, buf, sizeof buf - 1, 0);
  assert_true(n > 0);
  buf[n] = '\0';
  assert_non_null(strstr(buf, "HTTP/1.1 431"));
  assert_true(closed_within(c, 3000));
  assert_int_equal(handed_count(), 0);
  close(c);
}

static bool answered_431(unsigned port, const char *head) {
  int c = dial(port, "127.0.0.1");
  struct timeval tv = {.tv_sec = 3};
  setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  send(c, head, strlen(head), 0);
  char buf[256];
  ssize_t n = recv(c, buf, sizeof buf - 1, 0);
  close(c);
  if (n <= 0) return false;
  buf[n] = '\0';
  return strstr(buf, "HTTP/1.1 431") != NULL;
}

static void test_too_many_fields_is_answered(void **state) {
  fixture *f = *state;
  assert_true(answered_431(f->port, "GET / HTTP/1.1\na:\nb:\nc:\nd:\n\n"));
  assert_true(answered_431(f->port, "GET / HTTP/1.1\na:\nb:\nc:\nd:\ne")); /* not complete */
  assert_true(answered_431(f->port, "GET / HTTP/1.1\nCookie: a=1; b=2; c=3\nc:\n\n"));
  assert_true(answered_431(f->port, "GET / HTTP/1.1\r\ncookie: a;b;c;d\r\n\r\n"));
  int c = dial(f->port, "127.0.0.1");
  const char *ok = "GET / HTTP/1.1\r\nCookie: a=1; b=2\r\nc:\r\n\r\nx\ny\nz\n"; /* a body */
  send(c, ok, strlen(ok), 0);
  assert_int_equal(wait_handed(1), 1);
  close(c);
}

static void test_trickled_head_is_cut_at_the_deadline(void **state) {
  fixture *f = *state;
  int c = dial(f->port, "127.0.0.1");
  int64_t t0 = sg_mono_ms();
  bool closed = false;
  while (!closed && sg_mono_ms() - t0 < 2000) {
    send(c, "a", 1, MSG_NOSIGNAL);
    closed = closed_within(c, 50);
  }
  int64_t took = sg_mono_ms() - t0;
  assert_true(closed);
  assert_true(took >= 350 && took <= 1500);
  assert_int_equal(handed_count(), 0);
  close(c);
}

static void test_caps(void **state) {
  fixture *f = *state;
  int a[3];
  for (int i = 0; i < 3; i++) a[i] = dial(f->port, "127.0.0.1");
  int over = dial(f->port, "127.0.0.1"); /* the 4th from one address */
  assert_true(closed_within(over, 1000));
  close(over);
  int other = dial(f->port, "127.0.0.2"); /* another address still gets in */
  assert_false(closed_within(other, 100));
  /* Handed-over connections still count, until the server reports them closed. */
  send(a[0], "GET / HTTP/1.1\r\n\r\n", 18, 0);
  assert_int_equal(wait_handed(1), 1);
  struct sockaddr_in lo = {.sin_family = AF_INET};
  inet_pton(AF_INET, "127.0.0.1", &lo.sin_addr);
  sg__gate_opened(f->g, (struct sockaddr *)&lo);
  over = dial(f->port, "127.0.0.1");
  assert_true(closed_within(over, 1000));
  close(over);
  sg__gate_closed(f->g, (struct sockaddr *)&lo);
  int again = dial(f->port, "127.0.0.1");
  assert_false(closed_within(again, 100));
  for (int i = 0; i < 3; i++) close(a[i]);
  close(other);
  close(again);
}

/* A trusted proxy carries many clients: the per-IP cap does not apply to it, the total
 * cap still does. */
static void test_trusted_proxy_passes_the_per_ip_cap(void **state) {
  fixture *f = *state;
  int a[6];
  for (int i = 0; i < 6; i++) a[i] = dial(f->port, "127.0.0.3");
  for (int i = 0; i < 6; i++) assert_false(closed_within(a[i], i == 5 ? 100 : 0));
  int over = dial(f->port, "127.0.0.3"); /* the 7th: past max_connections */
  assert_true(closed_within(over, 1000));
  close(over);
  for (int i = 0; i < 6; i++) close(a[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_head_in_pieces_is_handed_over_unread, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bare_lf_head, setup, teardown),
      cmocka_unit_test_setup_teardown(test_leading_empty_lines_are_not_a_head, setup, teardown),
      cmocka_unit_test_setup_teardown(test_oversized_head_is_answered_and_closed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_too_many_fields_is_answered, setup, teardown),
      cmocka_unit_test_setup_teardown(test_trickled_head_is_cut_at_the_deadline, setup, teardown),
      cmocka_unit_test_setup_teardown(test_caps, setup, teardown),
      cmocka_unit_test_setup_teardown(test_trusted_proxy_passes_the_per_ip_cap, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
