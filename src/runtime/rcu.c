/*
 * Snapshot publication without locks on the read side (an epoch scheme).
 *
 * A reader announces itself by storing the current global epoch in its own slot (one
 * cache line per thread, claimed on first use), then loads the snapshot pointer; it
 * clears the slot when done. The writer stores the new pointer, advances the epoch, and
 * waits until every slot is either quiescent (0) or shows an epoch at least the new one:
 * such a reader loaded its pointer after the store, so it cannot hold the old snapshot.
 * All operations are sequentially consistent, which is what makes the argument hold.
 * Readers never wait; the writer (the loader thread) sleeps while it waits.
 */
#include <time.h>

#include "runtime/rt.h"

/* A thread's slot is tied to one rcu instance, named by a process-unique id (not its
 * address, which a later instance may reuse). */
static _Atomic uint64_t next_id = 1;
static _Thread_local uint64_t tl_rcu;
static _Thread_local int tl_slot = -1;

void sg__rcu_init(sg__rcu *r, sg__rt_snapshot *first) {
  r->id = atomic_fetch_add(&next_id, 1);
  atomic_init(&r->cur, first);
  atomic_init(&r->epoch, 1);
  atomic_init(&r->nslots, 0);
  atomic_init(&r->overflow, 0);
  for (int i = 0; i < SG__RCU_SLOTS; i++) atomic_init(&r->slots[i].epoch, 0);
}

const sg__rt_snapshot *sg__rcu_enter(sg__rcu *r) {
  if (tl_rcu != r->id) {
    unsigned i = atomic_fetch_add(&r->nslots, 1);
    tl_rcu = r->id;
    tl_slot = i < SG__RCU_SLOTS ? (int)i : -1;
  }
  if (tl_slot >= 0)
    atomic_store(&r->slots[tl_slot].epoch, atomic_load(&r->epoch));
  else
    atomic_fetch_add(&r->overflow, 1);
  return atomic_load(&r->cur);
}

void sg__rcu_leave(sg__rcu *r) {
  if (tl_slot >= 0)
    atomic_store(&r->slots[tl_slot].epoch, 0);
  else
    atomic_fetch_sub(&r->overflow, 1);
}

sg__rt_snapshot *sg__rcu_publish(sg__rcu *r, sg__rt_snapshot *s) {
  sg__rt_snapshot *old = atomic_exchange(&r->cur, s);
  uint64_t e = atomic_fetch_add(&r->epoch, 1) + 1;
  unsigned n = atomic_load(&r->nslots);
  if (n > SG__RCU_SLOTS) n = SG__RCU_SLOTS;
  const struct timespec nap = {0, 100 * 1000}; /* 100 µs */
  for (unsigned i = 0; i < n; i++)
    for (;;) {
      uint64_t v = atomic_load(&r->slots[i].epoch);
      if (v == 0 || v >= e) break;
      nanosleep(&nap, NULL);
    }
  while (atomic_load(&r->overflow) > 0) nanosleep(&nap, NULL);
  return old;
}
