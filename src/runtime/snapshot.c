/*
 * Snapshots: the whole edge store decoded into read-only tables.
 *
 * Built by the loader thread (never on a request thread), published through sg__rcu,
 * and freed once no reader can hold it. Everything a request needs is precomputed here: a
 * key's validity (key, application, workspace, list, cross-workspace subscription),
 * canonical origins, the bootstrap body and its ETag, the artifact of each published list
 * (read into the process's own memory and verified against its contentHash, never mapped
 * from the shared file).
 *
 * Incremental: the loader keeps the decoded records between builds (sg__rt_records) and
 * re-reads only those changed since the last revision; it also keeps the entries built
 * from them (one heap object per list, application and key, immutable once published),
 * and a new snapshot shares every entry its changes do not touch. A change rebuilds its
 * own entry and the keys that depend on it (found through a reverse index: a key depends
 * on its application, its list and their workspaces; a subscription on its list), so a
 * change costs O(touched entries · log n) plus copying the snapshot's pointer tables.
 * Replaced entries are retired onto the snapshot they were built for and freed with it
 * (rt.h). Artifacts are shared by content hash (refcounted by the lists holding them), so
 * a change that does not move a list's version does not reopen its artifact.
 */
#include <errno.h>
#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/util.h"
#include "compiler/format.h"
#include "edge/records.h"
#include "runtime/answer_cache.h"
#include "runtime/rt.h"
#include "state/state.h"

/* ---------------------------------------------------------------- arena ---------- */

/* A per-entry arena: small blocks first (an entry holds a few short strings). */
typedef struct block {
  struct block *next;
  size_t used, cap;
  char data[];
} block;

static void *arena_alloc(void **arena, size_t n) {
  n = (n + 15) & ~(size_t)15;
  block *b = *arena;
  if (!b || b->cap - b->used < n) {
    size_t cap = b ? b->cap * 2 : 256;
    if (cap > 65536) cap = 65536;
    if (cap < n) cap = n;
    block *nb = malloc(sizeof *nb + cap);
    if (!nb) return NULL;
    nb->next = b;
    nb->used = 0;
    nb->cap = cap;
    *arena = b = nb;
  }
  void *p = b->data + b->used;
  b->used += n;
  return p;
}

static char *arena_strdup(void **arena, const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s);
  char *p = arena_alloc(arena, n + 1);
  if (p) memcpy(p, s, n + 1);
  return p;
}

static void arena_free(void *arena) {
  for (block *b = arena; b;) {
    block *n = b->next;
    free(b);
    b = n;
  }
}

/* ---------------------------------------------------------------- records -------- */

/* The records of one kind, sorted by id (as sg_edge_foreach delivers them), with the
 * entry built from each (NULL: none, the record is unusable): sg__rt_list *, sg__rt_app *,
 * key_node *; NULL for the other kinds. */
typedef struct {
  json_t **v;
  char **ids;
  void **e;
  size_t n, cap;
} recs;

/* Appends (id, o) to r, taking o. */
static int recs_push(recs *r, const char *id, json_t *o) {
  if (r->n == r->cap) {
    size_t nc = r->cap ? r->cap * 2 : 64;
    json_t **nv = realloc(r->v, nc * sizeof *nv);
    if (!nv) goto oom;
    r->v = nv;
    char **ni = realloc(r->ids, nc * sizeof *ni);
    if (!ni) goto oom;
    r->ids = ni;
    void **ne = realloc(r->e, nc * sizeof *ne);
    if (!ne) goto oom;
    r->e = ne;
    r->cap = nc;
  }
  r->ids[r->n] = strdup(id);
  if (!r->ids[r->n]) goto oom;
  r->e[r->n] = NULL;
  r->v[r->n++] = o;
  return 0;
oom:
  json_decref(o);
  return -1;
}

/* A record's JSON object, or NULL: an unreadable record is as good as absent. */
static json_t *decode(const char *json, size_t len) {
  json_t *o = json_loadb(json, len, 0, NULL);
  if (!json_is_object(o)) {
    json_decref(o);
    return NULL;
  }
  return o;
}

static int collect(const char *id, const char *json, size_t len, void *ctx) {
  json_t *o = decode(json, len);
  return o ? recs_push(ctx, id, o) : 0;
}

/* Frees the records (their entries must have been taken out). */
static void recs_free(recs *r) {
  for (size_t i = 0; i < r->n; i++) {
    json_decref(r->v[i]);
    free(r->ids[i]);
  }
  free(r->v);
  free(r->ids);
  free(r->e);
  memset(r, 0, sizeof *r);
}

/* The index of id in r, or where it would go. */
static size_t recs_find(const recs *r, const char *id, bool *found) {
  size_t lo = 0, hi = r->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(r->ids[mid], id);
    if (c == 0) {
      *found = true;
      return mid;
    }
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  *found = false;
  return lo;
}

/* The record of id (NULL when absent); *at its index. An id longer than any record id
 * names none (and is never indexed: see key_dep). */
static json_t *recs_get(const recs *r, const char *id, size_t *at) {
  bool found;
  if (!id || strlen(id) > SG_EDGE_MAX_ID) return NULL;
  size_t i = recs_find(r, id, &found);
  if (at) *at = i;
  return found ? r->v[i] : NULL;
}

/* ---------------------------------------------------------------- the model ------ */

/* A key record's loader-side node: its entry, and the names it is indexed under. */
typedef struct key_node {
  char id[65]; /* the record id (the digest's hex) */
  sg__rt_key *k;
  char *deps[4]; /* "a:<app>", "l:<list>", "w:<workspace>" (the app's, the list's) */
  size_t pos[4]; /* where each sits in its name's list in the index */
  uint64_t mark; /* the build that last made its entry */
} key_node;

/* The reverse index: a name ("a:", "l:", "w:" + id) -> the key nodes that depend on it
 * (with which of their names it is, so that a node leaves in O(1)). */
typedef struct {
  key_node *n;
  int slot;
} dep_ref;

typedef struct {
  char *name;
  dep_ref *v;
  size_t n, cap;
} dep;

typedef struct {
  dep *slots;
  size_t mask, used;
} depmap;

typedef struct {
  sg__rt_art *a;
  size_t uses; /* model entries holding it */
} art_use;

typedef struct {
  sg__rt_signing_key *v;
  size_t n;
  void *arena;
} sig_block;

enum { RET_LIST, RET_APP, RET_KEY, RET_SIG };

typedef struct {
  void **p;
  unsigned char *kind;
  size_t n, cap;
} retired;

/* One change the record cache applied since the last build. old: the entry (or key
 * node) the record had; old_sub_list: a replaced or dropped subscription's list id. */
typedef struct {
  sg_edge_kind k;
  char *id;
  void *old;
  char *old_sub_list;
} change;

struct sg__rt_records {
  recs r[SG_EDGE__KINDS];
  uint64_t revision;
  bool valid;    /* the records match the edge store at revision */
  bool built;    /* the entries match the records, but for the changes below */
  sg_edge *edge; /* during an update */
  change *ch;
  size_t n_ch, cap_ch;
  bool ch_lost; /* a change could not be recorded: the next build is a full one */
  retired old;  /* entries taken out by a full read, retired once the rebuild is done */
  /* Entries. */
  sg__rt_key **tab; /* the keys by digest (open addressing, linear probing) */
  size_t tab_mask, n_keys;
  depmap deps;
  art_use *arts; /* sorted by hash */
  size_t n_arts, cap_arts;
  sig_block *sig;
  char **subs; /* active subscriptions as "workspaceId\x01listId", sorted */
  size_t n_subs;
  size_t n_missing, n_transient; /* lists whose artifact is missing / failed to fetch */
  uint64_t gen;                  /* builds so far */
  key_node **todo;               /* keys to rebuild in this build */
  size_t n_todo, cap_todo;
};

/* ---- retiring ---- */

static void art_release(sg__rt_art *a) {
  if (a && atomic_fetch_sub(&a->refs, 1) == 1) {
    sg_artifact_close(a->a);
    free(a);
  }
}

static void entry_free(int kind, void *p) {
  switch (kind) {
  case RET_LIST: {
    sg__rt_list *l = p;
    art_release(l->art);
    arena_free(l->arena);
    break;
  }
  case RET_APP: arena_free(((sg__rt_app *)p)->arena); break;
  case RET_KEY: arena_free(((sg__rt_key *)p)->arena); break;
  case RET_SIG:
    free(((sig_block *)p)->v);
    arena_free(((sig_block *)p)->arena);
    break;
  }
  free(p);
}

static int retired_push(retired *r, int kind, void *p) {
  if (r->n == r->cap) {
    size_t nc = r->cap ? r->cap * 2 : 16;
    void **np = realloc(r->p, nc * sizeof *np);
    if (!np) return -1;
    r->p = np;
    unsigned char *nk = realloc(r->kind, nc);
    if (!nk) return -1;
    r->kind = nk;
    r->cap = nc;
  }
  r->p[r->n] = p;
  r->kind[r->n++] = (unsigned char)kind;
  return 0;
}

static void retired_free(retired *r) {
  if (!r) return;
  for (size_t i = 0; i < r->n; i++) entry_free(r->kind[i], r->p[i]);
  free(r->p);
  free(r->kind);
  memset(r, 0, sizeof *r);
}

/* An entry no longer in the model: freed with prev (readers of prev may hold it), or at
 * once when no snapshot built from this model is published. Out of memory, it leaks
 * rather than risk a reader. */
static void retire(const sg__rt_snapshot *prev, int kind, void *p) {
  if (!p) return;
  if (!prev) {
    entry_free(kind, p);
    return;
  }
  /* The loader's own field of a published snapshot: requests never read it. */
  sg__rt_snapshot *ps = (sg__rt_snapshot *)prev;
  if (!ps->retired && !(ps->retired = calloc(1, sizeof(retired)))) return;
  retired_push(ps->retired, kind, p);
}

/* ---- artifacts in use ---- */

static size_t art_find(const sg__rt_records *c, const char *hash, bool *found) {
  size_t lo = 0, hi = c->n_arts;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int r = strcmp(c->arts[mid].a->hash, hash);
    if (r == 0) {
      *found = true;
      return mid;
    }
    if (r < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  *found = false;
  return lo;
}

/* The shared artifact of hash, with one reference for the caller: in use already, or
 * opened now. NULL when it cannot be had; *transient then says whether trying again may
 * help (the fetch failed) rather than the edge store lacking it or holding bytes that are
 * no artifact. */
static sg__rt_art *art_acquire(sg__rt_records *c, sg_edge *e, const char *hash, bool *transient) {
  *transient = false;
  bool found;
  size_t at = art_find(c, hash, &found);
  if (found) {
    c->arts[at].uses++;
    atomic_fetch_add(&c->arts[at].a->refs, 1);
    return c->arts[at].a;
  }
  if (c->n_arts == c->cap_arts) {
    size_t nc = c->cap_arts ? c->cap_arts * 2 : 16;
    art_use *na = realloc(c->arts, nc * sizeof *na);
    if (!na) return NULL;
    c->arts = na;
    c->cap_arts = nc;
  }
  sg_artifact *art;
  /* Read into sealed memory of our own and checked against its contentHash: a damaged or
   * truncated file answers artifact_unavailable and can never fault the process. */
  if (sg_edge_artifact_load(e, hash, &art)) {
    /* Absent, damaged or no artifact: the edge store's answer. Anything else (I/O, a
     * remote store unreachable mid-fetch) may pass: the runtime is not ready until a
     * first snapshot had none of those. */
    if (errno != ENOENT && errno != EBADMSG && errno != EINVAL) *transient = true;
    /* EINVAL: no artifact of a format this build opens (docs/ARTIFACT.md, "Format
     * versions"): say which formats it does open, the operator's first question. */
    if (errno != ENOENT)
      fprintf(stderr,
              "{\"level\":\"error\",\"msg\":\"artifact unusable\",\"contentHash\":\"%s\","
              "\"detail\":\"%s\",\"formatsRead\":[%u,%u]}\n",
              hash,
              errno == EBADMSG  ? "content does not match its hash"
              : errno == EINVAL ? "not an artifact of a format this build reads"
                                : strerror(errno),
              SG__ART_VERSION_PREV, SG__ART_VERSION);
    return NULL;
  }
  sg__rt_art *a = calloc(1, sizeof *a);
  if (!a) {
    sg_artifact_close(art);
    return NULL;
  }
  atomic_init(&a->refs, 1);
  a->a = art;
  if (sg_edge_artifact_stat(e, hash, &a->bytes)) a->bytes = 0;
  snprintf(a->hash, sizeof a->hash, "%s", hash);
  a->cache_gen = sg__ac_generation();
  memmove(&c->arts[at + 1], &c->arts[at], (c->n_arts - at) * sizeof *c->arts);
  c->arts[at] = (art_use){a, 1};
  c->n_arts++;
  return a;
}

/* A list entry leaves the model: its artifact is one use less (the reference itself goes
 * with the entry). */
static void list_retire(sg__rt_records *c, const sg__rt_snapshot *prev, sg__rt_list *l) {
  if (!l) return;
  if (l->art) {
    bool found;
    size_t at = art_find(c, l->art->hash, &found);
    if (found && --c->arts[at].uses == 0) {
      memmove(&c->arts[at], &c->arts[at + 1], (c->n_arts - at - 1) * sizeof *c->arts);
      c->n_arts--;
    }
  }
  if (l->art_missing) c->n_missing--;
  if (l->art_transient) c->n_transient--;
  retire(prev, RET_LIST, l);
}

/* ---- the key table ---- */

static size_t tab_home(const sg__rt_records *c, const uint8_t d[32]) {
  uint64_t h;
  memcpy(&h, d, sizeof h);
  return (size_t)h & c->tab_mask;
}

static int tab_grow(sg__rt_records *c) {
  size_t cap = c->tab ? (c->tab_mask + 1) * 2 : 16;
  sg__rt_key **nt = calloc(cap, sizeof *nt), **old = c->tab;
  if (!nt) return -1;
  size_t oldcap = c->tab ? c->tab_mask + 1 : 0;
  c->tab = nt;
  c->tab_mask = cap - 1;
  for (size_t i = 0; i < oldcap; i++)
    if (old[i]) {
      size_t at = tab_home(c, old[i]->digest);
      while (c->tab[at]) at = (at + 1) & c->tab_mask;
      c->tab[at] = old[i];
    }
  free(old);
  return 0;
}

/* Inserts k, or replaces the entry of the same digest. */
static int tab_put(sg__rt_records *c, sg__rt_key *k) {
  if ((!c->tab || (c->n_keys + 1) * 2 > c->tab_mask + 1) && tab_grow(c)) return -1;
  size_t at = tab_home(c, k->digest);
  while (c->tab[at] && memcmp(c->tab[at]->digest, k->digest, 32) != 0) at = (at + 1) & c->tab_mask;
  if (!c->tab[at]) c->n_keys++;
  c->tab[at] = k;
  return 0;
}

/* Removes k (backward-shift deletion: no tombstones). */
static void tab_del(sg__rt_records *c, const sg__rt_key *k) {
  if (!c->tab) return;
  size_t at = tab_home(c, k->digest);
  while (c->tab[at] != k) {
    if (!c->tab[at]) return;
    at = (at + 1) & c->tab_mask;
  }
  c->tab[at] = NULL;
  c->n_keys--;
  for (size_t j = (at + 1) & c->tab_mask; c->tab[j]; j = (j + 1) & c->tab_mask) {
    size_t h = tab_home(c, c->tab[j]->digest);
    /* Move j into the hole when its home is not cyclically within (at, j]. */
    bool stays = at <= j ? (at < h && h <= j) : (at < h || h <= j);
    if (!stays) {
      c->tab[at] = c->tab[j];
      c->tab[j] = NULL;
      at = j;
    }
  }
}

/* ---- the reverse index ---- */

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ULL;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

static void deps_clear(depmap *m) {
  for (size_t i = 0; m->slots && i <= m->mask; i++) {
    free(m->slots[i].name);
    free(m->slots[i].v);
  }
  free(m->slots);
  memset(m, 0, sizeof *m);
}

/* The entry of name, created when create (NULL when absent or out of memory). */
static dep *dep_get(depmap *m, const char *name, bool create) {
  if (create && (m->used + 1) * 2 > (m->slots ? m->mask + 1 : 0)) {
    size_t cap = m->slots ? (m->mask + 1) * 2 : 1024;
    dep *ns = calloc(cap, sizeof *ns);
    if (!ns) return NULL;
    for (size_t i = 0; m->slots && i <= m->mask; i++)
      if (m->slots[i].name) {
        size_t at = (size_t)hash_str(m->slots[i].name) & (cap - 1);
        while (ns[at].name) at = (at + 1) & (cap - 1);
        ns[at] = m->slots[i];
      }
    free(m->slots);
    m->slots = ns;
    m->mask = cap - 1;
  }
  if (!m->slots) return NULL;
  for (size_t at = (size_t)hash_str(name) & m->mask;; at = (at + 1) & m->mask) {
    dep *d = &m->slots[at];
    if (!d->name) {
      if (!create || !(d->name = strdup(name))) return NULL;
      m->used++;
      return d;
    }
    if (strcmp(d->name, name) == 0) return d;
  }
}

/* Indexes node n under its name n->deps[slot]. */
static int dep_add(depmap *m, key_node *n, int slot) {
  dep *d = dep_get(m, n->deps[slot], true);
  if (!d) return -1;
  if (d->n == d->cap) {
    size_t nc = d->cap ? d->cap * 2 : 4;
    dep_ref *nv = realloc(d->v, nc * sizeof *nv);
    if (!nv) return -1;
    d->v = nv;
    d->cap = nc;
  }
  n->pos[slot] = d->n;
  d->v[d->n++] = (dep_ref){n, slot};
  return 0;
}

/* Takes n out from under n->deps[slot]: the last one of that name moves into its place. */
static void dep_remove(depmap *m, key_node *n, int slot) {
  dep *d = dep_get(m, n->deps[slot], false);
  size_t i = n->pos[slot];
  if (!d || i >= d->n || d->v[i].n != n || d->v[i].slot != slot) return; /* never added */
  d->v[i] = d->v[--d->n];
  if (i < d->n) d->v[i].n->pos[d->v[i].slot] = i;
}

/* Queues the keys indexed under prefix+id for a rebuild. */
static int deps_touch(sg__rt_records *c, const char *prefix, const char *id) {
  char name[SG_EDGE_MAX_ID + 8];
  if (!id || strlen(id) > SG_EDGE_MAX_ID) return 0;
  snprintf(name, sizeof name, "%s%s", prefix, id);
  dep *d = dep_get(&c->deps, name, false);
  if (!d) return 0;
  if (c->n_todo + d->n > c->cap_todo) {
    size_t nc = c->cap_todo ? c->cap_todo : 64;
    while (nc < c->n_todo + d->n) nc *= 2;
    key_node **nt = realloc(c->todo, nc * sizeof *nt);
    if (!nt) return -1;
    c->todo = nt;
    c->cap_todo = nc;
  }
  for (size_t i = 0; i < d->n; i++) c->todo[c->n_todo++] = d->v[i].n;
  return 0;
}

/* ---------------------------------------------------------------- records cache --- */

void sg__records_invalidate(sg__rt_records *c) {
  if (c) c->valid = false;
}

static int change_push(sg__rt_records *c, sg_edge_kind k, const char *id, void *old,
                       const json_t *old_rec) {
  if (c->n_ch == c->cap_ch) {
    size_t nc = c->cap_ch ? c->cap_ch * 2 : 16;
    change *n = realloc(c->ch, nc * sizeof *n);
    if (!n) return -1;
    c->ch = n;
    c->cap_ch = nc;
  }
  change *x = &c->ch[c->n_ch];
  memset(x, 0, sizeof *x);
  x->k = k;
  x->old = old;
  if (!(x->id = strdup(id))) return -1;
  sg_edge_subscription_rec sr;
  if (k == SG_EDGE_SUBSCRIPTION && old_rec && !sg_edge_subscription_decode(old_rec, &sr) &&
      !(x->old_sub_list = strdup(sr.list_id))) {
    free(x->id);
    return -1;
  }
  c->n_ch++;
  return 0;
}

/* sg_edge_change_cb: replaces, adds or drops one record of the cache, and notes the
 * change (with the entry the record had) for the next build. */
static int apply_change(sg_edge_kind k, const char *id, uint64_t rev, void *ctx) {
  (void)rev;
  sg__rt_records *c = ctx;
  recs *r = &c->r[k];
  char *json = NULL;
  size_t len = 0;
  json_t *o = NULL;
  if (sg_edge_get(c->edge, k, id, &json, &len) == 0)
    o = decode(json, len);
  else if (errno != ENOENT)
    return -1;
  free(json);
  bool found;
  size_t at = recs_find(r, id, &found);
  if (!found && !o) return 0;
  /* Noted first: a change that cannot be noted makes the next build a full one. */
  if (change_push(c, k, id, found ? r->e[at] : NULL, found ? r->v[at] : NULL)) {
    json_decref(o);
    c->ch_lost = true;
    return -1;
  }
  if (found) r->e[at] = NULL;
  if (found && o) {
    json_decref(r->v[at]);
    r->v[at] = o;
  } else if (found) {
    json_decref(r->v[at]);
    free(r->ids[at]);
    memmove(&r->v[at], &r->v[at + 1], (r->n - at - 1) * sizeof *r->v);
    memmove(&r->ids[at], &r->ids[at + 1], (r->n - at - 1) * sizeof *r->ids);
    memmove(&r->e[at], &r->e[at + 1], (r->n - at - 1) * sizeof *r->e);
    r->n--;
  } else {
    /* Appended, then moved into its sorted place. */
    size_t n = r->n;
    if (recs_push(r, id, o)) {
      c->ch_lost = true;
      return -1;
    }
    json_t *v = r->v[n];
    char *nid = r->ids[n];
    memmove(&r->v[at + 1], &r->v[at], (n - at) * sizeof *r->v);
    memmove(&r->ids[at + 1], &r->ids[at], (n - at) * sizeof *r->ids);
    memmove(&r->e[at + 1], &r->e[at], (n - at) * sizeof *r->e);
    r->v[at] = v;
    r->ids[at] = nid;
    r->e[at] = NULL;
  }
  return 0;
}

static void key_node_free(key_node *n) {
  for (int i = 0; i < 4; i++) free(n->deps[i]);
  free(n);
}

static void changes_clear(sg__rt_records *c) {
  for (size_t i = 0; i < c->n_ch; i++) {
    free(c->ch[i].id);
    free(c->ch[i].old_sub_list);
  }
  c->n_ch = 0;
}

/* Takes every entry out of the model (a full read follows): they go to c->old, retired
 * once the rebuild is done (so that it still finds their artifacts in use). */
static void model_take_all(sg__rt_records *c) {
  for (size_t i = 0; i < c->n_ch; i++) {
    void *p = c->ch[i].old;
    if (!p) continue;
    if (c->ch[i].k == SG_EDGE_KEY) {
      key_node *n = p;
      if (n->k) retired_push(&c->old, RET_KEY, n->k);
      key_node_free(n);
    } else {
      retired_push(&c->old, c->ch[i].k == SG_EDGE_LIST ? RET_LIST : RET_APP, p);
    }
  }
  changes_clear(c);
  c->ch_lost = false;
  for (size_t i = 0; i < c->r[SG_EDGE_LIST].n; i++)
    if (c->r[SG_EDGE_LIST].e[i]) retired_push(&c->old, RET_LIST, c->r[SG_EDGE_LIST].e[i]);
  for (size_t i = 0; i < c->r[SG_EDGE_APP].n; i++)
    if (c->r[SG_EDGE_APP].e[i]) retired_push(&c->old, RET_APP, c->r[SG_EDGE_APP].e[i]);
  for (size_t i = 0; i < c->r[SG_EDGE_KEY].n; i++) {
    key_node *n = c->r[SG_EDGE_KEY].e[i];
    if (!n) continue;
    if (n->k) retired_push(&c->old, RET_KEY, n->k);
    key_node_free(n);
  }
  for (int k = 0; k < SG_EDGE__KINDS; k++)
    if (c->r[k].e) memset(c->r[k].e, 0, c->r[k].n * sizeof *c->r[k].e);
  if (c->sig) retired_push(&c->old, RET_SIG, c->sig);
  c->sig = NULL;
  free(c->tab);
  c->tab = NULL;
  c->tab_mask = c->n_keys = 0;
  deps_clear(&c->deps);
  for (size_t i = 0; i < c->n_subs; i++) free(c->subs[i]);
  free(c->subs);
  c->subs = NULL;
  c->n_subs = 0;
  c->built = false;
}

/* Retires what model_take_all took out. */
static void model_retire_old(sg__rt_records *c, const sg__rt_snapshot *prev) {
  for (size_t i = 0; i < c->old.n; i++) {
    if (c->old.kind[i] == RET_LIST)
      list_retire(c, prev, c->old.p[i]);
    else
      retire(prev, c->old.kind[i], c->old.p[i]);
  }
  c->old.n = 0;
}

void sg__records_free(sg__rt_records *c) {
  if (!c) return;
  model_take_all(c);
  model_retire_old(c, NULL);
  retired_free(&c->old);
  for (int k = 0; k < SG_EDGE__KINDS; k++) recs_free(&c->r[k]);
  free(c->ch);
  free(c->arts);
  free(c->todo);
  free(c);
}

/* Brings the cache to the edge store's current revision: only the records changed since
 * the cache's revision when the change log reaches back that far, else all of them. */
static int records_update(sg_edge *e, sg__rt_records *c) {
  c->edge = e;
  uint64_t upto;
  int rc = c->valid ? sg_edge_changes_since(e, c->revision, apply_change, c, &upto) : -1;
  c->edge = NULL;
  if (rc == 0 && !c->ch_lost) {
    c->revision = upto;
    return 0;
  }
  /* A full read, and every entry built again. The revision first: records read after it
   * are at least that new, and the next update re-reads whatever changed after it
   * (reading a record twice is harmless). */
  c->valid = false;
  model_take_all(c);
  for (int k = 0; k < SG_EDGE__KINDS; k++) recs_free(&c->r[k]);
  if (sg_edge_revision(e, &c->revision)) return -1;
  for (int k = 0; k < SG_EDGE__KINDS; k++)
    if (sg_edge_foreach(e, (sg_edge_kind)k, collect, &c->r[k])) return -1;
  c->valid = true;
  return 0;
}

/* ---------------------------------------------------------------- entries -------- */

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The list entry of record id in the snapshot prev (sorted by id), or NULL. */
static const sg__rt_list *find_prev_list(const sg__rt_snapshot *prev, const char *id) {
  size_t lo = 0, hi = prev ? prev->n_lists : 0;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int r = strcmp(prev->lists[mid]->id, id);
    if (r == 0) return prev->lists[mid];
    if (r < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

/* Builds the entry of list record file_id: 0 with *out set, 1 when the record is
 * unusable (decodes badly, or names another id than the one it is stored under), -1 out
 * of memory. */
static int build_list(sg__rt_records *c, sg_edge *e, const sg__rt_snapshot *prev, json_t *o,
                      const char *file_id, sg__rt_list **out) {
  sg_edge_list_rec rec;
  *out = NULL;
  if (sg_edge_list_decode(o, file_id, &rec) || strcmp(rec.id, file_id) != 0) return 1;
  sg__rt_list *l = calloc(1, sizeof *l);
  if (!l) return -1;
  l->gen = c->gen;
  l->archived = rec.archived;
  l->id = arena_strdup(&l->arena, rec.id);
  l->workspace_id = arena_strdup(&l->arena, rec.workspace_id);
  l->visibility = rec.visibility == SG_EDGE_VIS_PUBLIC   ? SG__VIS_PUBLIC
                  : rec.visibility == SG_EDGE_VIS_SHARED ? SG__VIS_SHARED
                                                         : SG__VIS_PRIVATE;
  l->min_query_chars = rec.min_query_chars;
  l->typo = rec.typo;
  const char *hash = rec.content_hash;
  if (hash) l->content_hash = arena_strdup(&l->arena, hash);
  l->published = hash && !l->archived;
  if (l->published) {
    bool transient, t2 = false;
    l->art = art_acquire(c, e, hash, &transient);
    l->art_missing = !l->art;
    /* A list moves to a new version only once its artifact is here: when fetching it
     * failed, the version this runtime already serves stays (with its hash in the
     * bootstrap and the request ids), and the loader retries the new one. An artifact
     * the edge store lacks or holds damaged answers artifact_unavailable, as it must. */
    const sg__rt_list *old = transient && prev ? find_prev_list(prev, file_id) : NULL;
    if (old && old->art && old->content_hash && strcmp(old->content_hash, hash) != 0 &&
        (l->art = art_acquire(c, e, old->content_hash, &t2)))
      hash = l->content_hash = arena_strdup(&l->arena, old->content_hash);
    l->art_transient = transient || t2;
    if (l->art_missing) c->n_missing++;
    if (l->art_transient) c->n_transient++;
  }

  /* Prebuilt bootstrap body and its ETag. */
  const char *dflt = rec.default_locale;
  const json_t *sup = rec.supported_locales;
  sg_buf b;
  sg_buf_init(&b, 0);
  int rc = !l->id || (l->published && !hash);
  rc = rc || sg_buf_puts(&b, "{\"list\":{\"id\":");
  rc = rc || sg_buf_json_str(&b, l->id, strlen(l->id));
  rc = rc || sg_buf_puts(&b, "},\"activeVersionHash\":");
  rc = rc || (l->published ? sg_buf_json_str(&b, hash, strlen(hash)) : sg_buf_puts(&b, "null"));
  rc = rc || sg_buf_printf(&b,
                           ",\"queryPolicy\":{\"minQueryChars\":%d,\"debounceMs\":%d,"
                           "\"typoTolerance\":{\"enabled\":%s,\"minCharsOneTypo\":%d,"
                           "\"minCharsTwoTypos\":%d}}",
                           rec.min_query_chars, rec.debounce_ms, l->typo.enabled ? "true" : "false",
                           l->typo.min_one, l->typo.min_two);
  rc = rc || sg_buf_puts(&b, ",\"localePolicy\":{\"defaultLocale\":");
  rc = rc || sg_buf_json_str(&b, dflt, strlen(dflt));
  rc = rc || sg_buf_puts(&b, ",\"supportedLocales\":[");
  size_t nsup = 0;
  if (sup) {
    size_t i;
    const json_t *v;
    json_array_foreach(sup, i, v) {
      if (!json_is_string(v)) continue;
      rc = rc || (nsup++ ? sg_buf_putc(&b, ',') : 0);
      rc = rc || sg_buf_json_str(&b, json_string_value(v), json_string_length(v));
    }
  }
  if (nsup == 0) rc = rc || sg_buf_json_str(&b, dflt, strlen(dflt));
  rc = rc || sg_buf_puts(&b, "]}}");
  if (!rc) {
    l->bootstrap = arena_alloc(&l->arena, b.len + 1);
    if (l->bootstrap) memcpy(l->bootstrap, b.data, b.len + 1);
    l->bootstrap_len = b.len;
    uint8_t d[32];
    sg_sha256(b.data, b.len, d);
    l->bootstrap_etag[0] = '"';
    sg_hex(d, 16, l->bootstrap_etag + 1);
    strcpy(l->bootstrap_etag + 33, "\"");
  }
  sg_buf_free(&b);
  /* The id as a JSON literal, for the query body. */
  sg_buf_init(&b, 0);
  rc = rc || sg_buf_json_str(&b, l->id, strlen(l->id));
  if (!rc) l->id_json = arena_strdup(&l->arena, b.data);
  sg_buf_free(&b);
  *out = l;
  return (rc || !l->bootstrap || !l->id_json) ? -1 : 0;
}

/* The application entry of record file_id, as build_list. */
static int build_app(sg_rt_state *st, json_t *o, const char *file_id, sg__rt_app **out) {
  sg_edge_app_rec ar;
  *out = NULL;
  if (sg_edge_app_decode(o, file_id, &ar) || strcmp(ar.id, file_id) != 0) return 1;
  sg__rt_app *a = calloc(1, sizeof *a);
  if (!a) return -1;
  *out = a;
  a->id = arena_strdup(&a->arena, ar.id);
  a->workspace_id = arena_strdup(&a->arena, ar.workspace_id);
  a->active = ar.active;
  a->limited = ar.limited;
  a->monthly_quota = ar.monthly_quota;
  if (!a->id || (ar.workspace_id && !a->workspace_id)) return -1;
  a->slot = sg_rt_state_quota_slot(st, a->id);
  return a->slot ? 0 : -1;
}

static int build_sig(sg__rt_records *c) {
  const recs *rk = &c->r[SG_EDGE_SIGNING_KEY];
  sig_block *b = calloc(1, sizeof *b);
  if (!b) return -1;
  if (!(b->v = calloc(rk->n + 1, sizeof *b->v))) {
    free(b);
    return -1;
  }
  c->sig = b; /* the caller retired the old block */
  for (size_t i = 0; i < rk->n; i++) {
    sg_edge_signing_key_rec kr;
    sg__rt_signing_key *sk = &b->v[b->n];
    if (sg_edge_signing_key_decode(rk->v[i], &kr)) continue;
    memcpy(sk->public_key, kr.public_key, sizeof sk->public_key);
    if (!(sk->kid = arena_strdup(&b->arena, kr.kid))) return -1;
    b->n++;
  }
  return 0;
}

static int build_subs(sg__rt_records *c) {
  for (size_t i = 0; i < c->n_subs; i++) free(c->subs[i]);
  free(c->subs);
  c->n_subs = 0;
  const recs *rs = &c->r[SG_EDGE_SUBSCRIPTION];
  if (!(c->subs = calloc(rs->n + 1, sizeof *c->subs))) return -1;
  for (size_t i = 0; i < rs->n; i++) {
    sg_edge_subscription_rec sr;
    if (sg_edge_subscription_decode(rs->v[i], &sr) || !sr.active) continue;
    size_t n = strlen(sr.workspace_id) + strlen(sr.list_id) + 2;
    char *k = malloc(n);
    if (!k) return -1;
    snprintf(k, n, "%s\x01%s", sr.workspace_id, sr.list_id);
    c->subs[c->n_subs++] = k;
  }
  qsort(c->subs, c->n_subs, sizeof *c->subs, cmp_str);
  return 0;
}

/* Whether workspace id is known, and active. */
static bool ws_active(const sg__rt_records *c, const char *id, bool *known) {
  json_t *o = recs_get(&c->r[SG_EDGE_WORKSPACE], id, NULL);
  sg_edge_workspace_rec w;
  *known = o && !sg_edge_workspace_decode(o, id, &w) && strcmp(w.id, id) == 0;
  return *known && w.active;
}

/* A key record's id: the lower-case hex of its digest (one record per digest). */
static bool hex_digest(const char *hex, uint8_t out[32]) {
  if (strlen(hex) != 64 || strspn(hex, "0123456789abcdef") != 64) return false;
  size_t bl;
  return sodium_hex2bin(out, 32, hex, 64, NULL, &bl, NULL) == 0 && bl == 32;
}

/* Takes a key node out of the table and the index, and retires its entry. */
static void key_unlink(sg__rt_records *c, const sg__rt_snapshot *prev, key_node *n) {
  for (int i = 0; i < 4; i++) {
    if (n->deps[i]) dep_remove(&c->deps, n, i);
    free(n->deps[i]);
    n->deps[i] = NULL;
  }
  if (n->k) {
    tab_del(c, n->k);
    retire(prev, RET_KEY, n->k);
    n->k = NULL;
  }
}

static int key_dep(sg__rt_records *c, key_node *n, int slot, const char *prefix, const char *id) {
  char name[SG_EDGE_MAX_ID + 8];
  /* An id longer than any record id names no record: nothing to follow. */
  if (!id || strlen(id) > SG_EDGE_MAX_ID) return 0;
  snprintf(name, sizeof name, "%s%s", prefix, id);
  for (int i = 0; i < slot; i++)
    if (n->deps[i] && strcmp(n->deps[i], name) == 0) return 0;
  if (!(n->deps[slot] = strdup(name))) return -1;
  n->pos[slot] = SIZE_MAX; /* not in the index until dep_add returns */
  return dep_add(&c->deps, n, slot);
}

/* Builds the entry of key node n from its record o, indexes it and puts it in the table. */
static int key_link(sg__rt_records *c, key_node *n, json_t *o) {
  n->mark = c->gen;
  uint8_t d[32];
  if (!hex_digest(n->id, d)) return 0;
  sg_edge_key_rec kr;
  sg_edge_key_decode(o, &kr);
  sg__rt_app *app = NULL;
  sg__rt_list *list = NULL;
  size_t at;
  if (recs_get(&c->r[SG_EDGE_APP], kr.application_id, &at)) app = c->r[SG_EDGE_APP].e[at];
  if (recs_get(&c->r[SG_EDGE_LIST], kr.list_id, &at)) list = c->r[SG_EDGE_LIST].e[at];
  /* What the key's validity reads: indexed first, so that a failure below leaves no
   * entry pointing at what a later change may retire unseen. */
  if (key_dep(c, n, 0, "a:", kr.application_id) || key_dep(c, n, 1, "l:", kr.list_id) ||
      key_dep(c, n, 2, "w:", app ? app->workspace_id : NULL) ||
      key_dep(c, n, 3, "w:", list ? list->workspace_id : NULL))
    return -1;
  sg__rt_key *k = calloc(1, sizeof *k);
  if (!k) return -1;
  memcpy(k->digest, d, 32);
  k->id = arena_strdup(&k->arena, kr.id);
  k->app = app;
  k->list = list;
  const json_t *origins = kr.origins;
  size_t no = origins ? json_array_size(origins) : 0;
  k->any_origin = no == 0;
  k->origins = arena_alloc(&k->arena, (no + 1) * sizeof *k->origins);
  if (!k->id || !k->origins) goto oom;
  for (size_t j = 0; j < no; j++) {
    const json_t *v = json_array_get(origins, j);
    char canon[SG__ORIGIN_MAX + 1];
    if (!json_is_string(v) || sg__origin_canon(json_string_value(v), json_string_length(v), true,
                                               canon, sizeof canon) < 0)
      continue;
    if (!(k->origins[k->n_origins] = arena_strdup(&k->arena, canon))) goto oom;
    k->n_origins++;
  }
  /* Validity: every record on the chain exists and is active. */
  bool ok = kr.active && app && app->active && list && app->workspace_id, known;
  if (ok) ok = ws_active(c, app->workspace_id, &known);
  /* The list's owner workspace, when known, must be active too. */
  if (ok && list->workspace_id) ok = ws_active(c, list->workspace_id, &known) || !known;
  if (ok && (!list->workspace_id || strcmp(list->workspace_id, app->workspace_id) != 0)) {
    /* Another workspace's list: only shared, and only under an active subscription. */
    char key[2 * SG_EDGE_MAX_ID + 8];
    snprintf(key, sizeof key, "%s\x01%s", app->workspace_id, list->id);
    const char *kp = key;
    ok = list->visibility == SG__VIS_SHARED &&
         bsearch(&kp, c->subs, c->n_subs, sizeof *c->subs, cmp_str) != NULL;
  }
  k->valid = ok;
  if (tab_put(c, k)) goto oom;
  n->k = k;
  return 0;
oom:
  entry_free(RET_KEY, k);
  return -1;
}

/* (Re)builds the key of record id (nothing when the record is gone). */
static int key_refresh(sg__rt_records *c, const sg__rt_snapshot *prev, const char *id) {
  size_t at;
  recs *r = &c->r[SG_EDGE_KEY];
  json_t *o = recs_get(r, id, &at);
  if (!o) return 0;
  key_node *n = r->e[at];
  if (n && n->mark == c->gen) return 0;
  if (n) {
    key_unlink(c, prev, n);
  } else {
    if (!(n = calloc(1, sizeof *n))) return -1;
    snprintf(n->id, sizeof n->id, "%s", id);
    r->e[at] = n;
  }
  return key_link(c, n, o);
}

/* (Re)builds the list entry at index at of the list records. */
static int list_refresh(sg__rt_records *c, sg_edge *e, const sg__rt_snapshot *prev, size_t at) {
  recs *r = &c->r[SG_EDGE_LIST];
  sg__rt_list *old = r->e[at], *l;
  int b = build_list(c, e, prev, r->v[at], r->ids[at], &l);
  r->e[at] = b == 0 ? l : NULL;
  if (b < 0) list_retire(c, NULL, l); /* never published */
  list_retire(c, prev, old);
  if (deps_touch(c, "l:", r->ids[at])) return -1;
  return b < 0 ? -1 : 0;
}

static int app_refresh(sg__rt_records *c, sg_rt_state *st, const sg__rt_snapshot *prev, size_t at) {
  recs *r = &c->r[SG_EDGE_APP];
  sg__rt_app *old = r->e[at], *a;
  int b = build_app(st, r->v[at], r->ids[at], &a);
  r->e[at] = b == 0 ? a : NULL;
  if (b < 0 && a) entry_free(RET_APP, a);
  retire(prev, RET_APP, old);
  if (deps_touch(c, "a:", r->ids[at])) return -1;
  return b < 0 ? -1 : 0;
}

/* Every entry from the records (after a full read). */
static int build_all(sg__rt_records *c, sg_edge *e, sg_rt_state *st, const sg__rt_snapshot *prev) {
  if (build_subs(c) || build_sig(c)) return -1;
  for (size_t i = 0; i < c->r[SG_EDGE_APP].n; i++)
    if (app_refresh(c, st, prev, i)) return -1;
  for (size_t i = 0; i < c->r[SG_EDGE_LIST].n; i++)
    if (list_refresh(c, e, prev, i)) return -1;
  c->n_todo = 0;
  for (size_t i = 0; i < c->r[SG_EDGE_KEY].n; i++)
    if (key_refresh(c, prev, c->r[SG_EDGE_KEY].ids[i])) return -1;
  return 0;
}

/* The entries the noted changes touch, the keys depending on them, and the lists whose
 * artifact is due a retry. */
static int build_changes(sg__rt_records *c, sg_edge *e, sg_rt_state *st,
                         const sg__rt_snapshot *prev) {
  c->n_todo = 0;
  /* Dropped and replaced keys leave the index first: nothing below may queue them. */
  for (size_t i = 0; i < c->n_ch; i++)
    if (c->ch[i].k == SG_EDGE_KEY && c->ch[i].old) {
      key_unlink(c, prev, c->ch[i].old);
      key_node_free(c->ch[i].old);
      c->ch[i].old = NULL;
    }
  bool subs = false, sig = false;
  for (size_t i = 0; i < c->n_ch; i++) {
    change *x = &c->ch[i];
    size_t at;
    json_t *o = recs_get(&c->r[x->k], x->id, &at);
    switch (x->k) {
    case SG_EDGE_LIST: {
      /* The entry it replaces goes after the new one is built: a version that stays (or
       * that a failed fetch falls back to) keeps its artifact open. */
      int rc = o && !c->r[x->k].e[at] ? list_refresh(c, e, prev, at) : deps_touch(c, "l:", x->id);
      list_retire(c, prev, x->old);
      x->old = NULL;
      if (rc) return -1;
      break;
    }
    case SG_EDGE_APP:
      retire(prev, RET_APP, x->old);
      x->old = NULL;
      if (o && !c->r[x->k].e[at]) {
        if (app_refresh(c, st, prev, at)) return -1;
      } else if (deps_touch(c, "a:", x->id)) {
        return -1;
      }
      break;
    case SG_EDGE_WORKSPACE:
      if (deps_touch(c, "w:", x->id)) return -1;
      break;
    case SG_EDGE_SUBSCRIPTION: {
      subs = true;
      sg_edge_subscription_rec sr;
      if ((x->old_sub_list && deps_touch(c, "l:", x->old_sub_list)) ||
          (o && !sg_edge_subscription_decode(o, &sr) && deps_touch(c, "l:", sr.list_id)))
        return -1;
      break;
    }
    case SG_EDGE_SIGNING_KEY: sig = true; break;
    default: break;
    }
  }
  if (subs && build_subs(c)) return -1;
  if (sig) {
    retire(prev, RET_SIG, c->sig);
    c->sig = NULL;
    if (build_sig(c)) return -1;
  }
  /* A missing artifact is tried again at every build (as a full build would). */
  for (size_t i = 0; c->n_missing && i < c->r[SG_EDGE_LIST].n; i++) {
    const sg__rt_list *l = c->r[SG_EDGE_LIST].e[i];
    if (l && l->art_missing && l->gen != c->gen && list_refresh(c, e, prev, i)) return -1;
  }
  for (size_t i = 0; i < c->n_ch; i++)
    if (c->ch[i].k == SG_EDGE_KEY && key_refresh(c, prev, c->ch[i].id)) return -1;
  /* Queued nodes are all linked (dropped ones left the index above); a rebuilt one leaves
   * and re-enters the index, so the queue was copied out of it. */
  for (size_t i = 0; i < c->n_todo; i++)
    if (key_refresh(c, prev, c->todo[i]->id)) return -1;
  return 0;
}

/* The index again from the key nodes: names whose keys all went stay in it until then. */
static int deps_rebuild(sg__rt_records *c) {
  deps_clear(&c->deps);
  const recs *r = &c->r[SG_EDGE_KEY];
  for (size_t i = 0; i < r->n; i++) {
    key_node *n = r->e[i];
    for (int j = 0; n && j < 4; j++)
      if (n->deps[j] && dep_add(&c->deps, n, j)) return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------- snapshots ------ */

/* The snapshot's tables: copies of the model's pointers (the entries are shared). */
static int assemble(sg__rt_records *c, sg__rt_snapshot *s) {
  size_t cap = c->tab ? c->tab_mask + 1 : 1;
  s->keys = malloc(cap * sizeof *s->keys);
  if (!s->keys) return -1;
  if (c->tab)
    memcpy(s->keys, c->tab, cap * sizeof *s->keys);
  else
    s->keys[0] = NULL;
  s->key_mask = cap - 1;
  const recs *rl = &c->r[SG_EDGE_LIST], *ra = &c->r[SG_EDGE_APP];
  s->lists = malloc((rl->n + 1) * sizeof *s->lists);
  s->apps = malloc((ra->n + 1) * sizeof *s->apps);
  s->arts = malloc((c->n_arts + 1) * sizeof *s->arts);
  if (!s->lists || !s->apps || !s->arts) return -1;
  for (size_t i = 0; i < rl->n; i++)
    if (rl->e[i]) s->lists[s->n_lists++] = rl->e[i];
  for (size_t i = 0; i < ra->n; i++)
    if (ra->e[i]) s->apps[s->n_apps++] = ra->e[i];
  for (size_t i = 0; i < c->n_arts; i++) s->arts[i] = c->arts[i].a;
  s->n_arts = c->n_arts;
  if (c->sig) {
    s->signing_keys = c->sig->v;
    s->n_signing_keys = c->sig->n;
  }
  s->missing_artifact = c->n_missing > 0;
  s->fetch_failed = c->n_transient > 0;
  return 0;
}

int sg__snapshot_load(sg_edge *e, sg_rt_state *st, const sg__rt_snapshot *prev,
                      sg__rt_records **cache, sg__rt_snapshot **out) {
  if (!*cache && !(*cache = calloc(1, sizeof **cache))) return -1;
  sg__rt_records *c = *cache;
  sg__rt_snapshot *s = calloc(1, sizeof *s);
  if (!s) return -1;
  c->gen++;
  int rc = records_update(e, c);
  if (rc == 0) rc = c->built ? build_changes(c, e, st, prev) : build_all(c, e, st, prev);
  if (rc == 0 && c->deps.used > 8 * c->n_keys + 4096) rc = deps_rebuild(c);
  if (rc) {
    /* Entries may be half built: the next load reads everything again. */
    model_take_all(c);
    c->valid = false;
  }
  changes_clear(c);
  /* What a full read took out goes now: the rebuild found the artifacts still in use.
   * Before the snapshot lists its artifacts: one that only a retired entry held is freed
   * with prev, so the new snapshot must not name it. */
  model_retire_old(c, prev);
  if (rc == 0 && assemble(c, s)) {
    rc = -1;
    model_take_all(c);
    c->valid = false;
    model_retire_old(c, prev);
  }
  if (rc) {
    sg__snapshot_free(s);
    return -1;
  }
  c->built = true;
  s->revision = c->revision;
  s->ever_complete = !s->fetch_failed || (prev && prev->ever_complete);
  *out = s;
  return 0;
}

void sg__snapshot_free(sg__rt_snapshot *s) {
  if (!s) return;
  retired_free(s->retired);
  free(s->retired);
  free(s->arts);
  free(s->keys);
  free(s->lists);
  free(s->apps);
  free(s);
}

const sg__rt_key *sg__snapshot_key(const sg__rt_snapshot *s, const uint8_t digest[32]) {
  if (!s->keys) return NULL;
  uint64_t h;
  memcpy(&h, digest, sizeof h);
  for (size_t at = (size_t)h & s->key_mask;; at = (at + 1) & s->key_mask) {
    const sg__rt_key *k = s->keys[at];
    if (!k) return NULL;
    if (memcmp(k->digest, digest, 32) == 0) return k;
  }
}
