/*
 * The runtime's access log, buffered per worker thread.
 *
 * One write(2) per request was the largest cost on the query path after the socket I/O.
 * Each worker thread appends its JSON lines to a buffer of its own; the loader thread
 * writes every buffer out each poll period (200 ms) and at shutdown, and a full buffer is
 * written by its own thread. So a line reaches stderr within a poll period, lines from one
 * thread stay in order, and a query costs no syscall beyond the socket. The buffer's mutex
 * is only ever contended by the flusher, a few times a second.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/rt.h"

#define LOG_BUF 16384
#define LOG_MAX_THREADS 256

typedef struct {
  pthread_mutex_t mu;
  size_t len;
  char data[LOG_BUF];
} tbuf;

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static tbuf *registry[LOG_MAX_THREADS];
static size_t registered;
static _Thread_local tbuf *mine;

static void write_all(const char *p, size_t n) {
  while (n) {
    ssize_t w = write(2, p, n);
    if (w <= 0) return; /* a log that cannot be written is dropped, never retried */
    p += w;
    n -= (size_t)w;
  }
}

/* The calling thread's buffer, registered on first use; NULL when the registry is full
 * (more threads than any pool we start) or memory is short: the line is written directly. */
static tbuf *thread_buf(void) {
  if (mine) return mine;
  pthread_mutex_lock(&registry_mu);
  if (registered < LOG_MAX_THREADS) {
    tbuf *b = malloc(sizeof *b);
    if (b) {
      pthread_mutex_init(&b->mu, NULL);
      b->len = 0;
      registry[registered++] = b;
      mine = b;
    }
  }
  pthread_mutex_unlock(&registry_mu);
  return mine;
}

void sg__rt_log_line(const char *line, size_t n) {
  tbuf *b = thread_buf();
  if (!b || n > LOG_BUF) {
    write_all(line, n);
    return;
  }
  pthread_mutex_lock(&b->mu);
  if (b->len + n > LOG_BUF) {
    write_all(b->data, b->len);
    b->len = 0;
  }
  memcpy(b->data + b->len, line, n);
  b->len += n;
  pthread_mutex_unlock(&b->mu);
}

void sg__rt_log_flush(void) {
  pthread_mutex_lock(&registry_mu);
  size_t n = registered;
  pthread_mutex_unlock(&registry_mu);
  for (size_t i = 0; i < n; i++) {
    tbuf *b = registry[i];
    pthread_mutex_lock(&b->mu);
    write_all(b->data, b->len);
    b->len = 0;
    pthread_mutex_unlock(&b->mu);
  }
}
