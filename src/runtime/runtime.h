/*
 * The runtime: the public /v1 API (query, bootstrap, selection) served from an in-memory
 * snapshot of the edge store. It never opens the relational store.
 *
 * sg_runtime_start loads the edge store, starts the HTTP listener (http/loop.c: one epoll
 * worker thread per CPU, HTTP/1.1 framing in http1.c), a loader thread that polls the edge revision
 * every 200 ms and swaps in a new snapshot, and a writer thread for selection events. Every call
 * into the runtime from outside happens on the starting thread.
 */
#ifndef SG_RUNTIME_RUNTIME_H
#define SG_RUNTIME_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "http/common/forwarded.h"

typedef struct {
  const char *listen;      /* "host:port", "[v6]:port" or ":port"; port 0 = any free */
  const char *edge;        /* edge store spec: a directory path or "redis://…" */
  const char *state_dir;   /* durable runtime files: quota counters, selection events
                              and dedupe; created if missing */
  unsigned selection_rate; /* selection reports per minute per publishable key; 0 = 600 */
  unsigned threads;        /* HTTP worker threads; 0 = number of CPUs */
  unsigned poll_ms;        /* edge revision poll period; 0 = 200 */
  bool access_log;         /* JSON-lines access log on stderr */
  /* Reverse proxies whose Forwarded / X-Forwarded-For name the client the access log
   * records (--trusted-proxies; NULL: none). Borrowed: must outlive the runtime. */
  const sg_trusted_proxies *trusted_proxies;
  /* Connections open at once (0: 16384). At the cap the oldest connection with no answer
   * waiting to be written is closed to admit a newcomer (docs/RUNTIME.md). */
  unsigned max_connections;
  /* --analytics off: no search analytics are counted (docs/DESIGN.md §9). */
  bool analytics_off;
  /* A control plane in the same process (`serve`): asks its edge guard to check the edge
   * now and write a heartbeat (returns 0 when it did), so a runtime that just loaded
   * under a stamp is confirmed at once instead of at the next heartbeat. NULL: wait. */
  int (*edge_confirm)(void *ctx);
  void *edge_confirm_ctx;
} sg_runtime_config;

typedef struct sg_runtime sg_runtime;

/* Starts the runtime. On success *out owns it and the listening address has been printed
 * to stderr as one JSON line {"level":"info","msg":"runtime listening","url":"http://h:p"}.
 * Returns 0, or -1 after printing an {"error":…} line to stderr. */
int sg_runtime_start(const sg_runtime_config *cfg, sg_runtime **out);
/* The bound port (useful with port 0). */
unsigned sg_runtime_port(const sg_runtime *rt);
/* Stops accepting, finishes in-flight requests, flushes quota counters and selection
 * events, and frees everything. */
void sg_runtime_stop(sg_runtime *rt);

/* `suggestd runtime --edge DIR | --data-dir DIR [--runtime-listen 127.0.0.1:8081]
 *  [--selection-rate 600] [--state-dir DIR] [--threads N] [--quiet]`: runs until SIGTERM
 * or SIGINT. Returns the process exit code. */
int sg_cmd_runtime(int argc, char **argv);

#endif
