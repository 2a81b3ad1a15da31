/*
 * Owners of leases and in-flight records, for every backend (store_internal.h): a process
 * named by host, pid and start time, and whether such an owner on this host has died.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store_internal.h"

/* The start time of process pid in clock ticks since boot (field 22 of /proc/PID/stat),
 * which together with the pid names one process for ever (pids are reused, this pair is
 * not). 0 when the process does not exist. */
static unsigned long long proc_start(long pid) {
  char p[64], buf[1024];
  snprintf(p, sizeof p, "/proc/%ld/stat", pid);
  FILE *f = fopen(p, "re");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  /* The command name (field 2) may hold spaces and parentheses: count from the last ')'. */
  char *at = strrchr(buf, ')');
  if (!at) return 0;
  at++;
  for (int field = 3; field < 22 && at; field++) at = strchr(at + 1, ' ');
  return at ? strtoull(at + 1, NULL, 10) : 0;
}

/* This process as an owner: "<host> <pid> <start>". Recomputed after a fork. */
const char *sg__store_self_owner(void) {
  static __thread char owner[320];
  static __thread long owner_pid;
  long pid = (long)getpid();
  if (owner_pid != pid) {
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    snprintf(owner, sizeof owner, "%s %ld %llu", host, pid, proc_start(pid));
    owner_pid = pid;
  }
  return owner;
}

/* True when owner names a process of this host that is no longer running. */
bool sg__store_owner_dead(const char *owner) {
  if (!owner) return false;
  const char *me = sg__store_self_owner();
  const char *sp = strchr(owner, ' '), *msp = strchr(me, ' ');
  if (!sp || !msp || sp - owner != msp - me || memcmp(owner, me, (size_t)(sp - owner)) != 0)
    return false; /* another host: only the age rule applies */
  long pid = 0;
  unsigned long long start = 0;
  if (sscanf(sp + 1, "%ld %llu", &pid, &start) != 2 || pid <= 0) return false;
  return proc_start(pid) != start;
}
