/*
 * `suggestd admin …`: operator commands on the store, mirrored to the edge store so the
 * runtime sees them within a second. Each prints one JSON object on stdout and exits 0,
 * or prints {"error": …} on stderr and exits non-zero. Works while `serve` runs on the
 * same data dir (SQLite WAL + busy timeout; the edge store serialises writers).
 *
 * The store marks every edge record a change touches in the change's own transaction
 * (the edge outbox); after the change each command writes every dirty record
 * (edge_sync.h). When the edge write fails the change is still made and the command
 * still succeeds, with "edgeSync": {"state": "pending"} in its output: the mark stays,
 * and a running server's reconciler (or the next admin command) writes the record.
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/origin.h"
#include "common/util.h"
#include "control/edge_sync.h"

static const sg_flag_spec admin_flags[] = {
    {"data-dir", true, false}, {"database", true, false},  {"edge", true, false},
    {"name", true, false},     {"workspace", true, false}, {"application", true, false},
    {"list", true, false},     {"origin", true, true},     {"monthly-quota", true, false},
    {NULL, false, false},
};

typedef struct {
  sg_args *a;
  sg_store *st;
  sg_edge *edge;
} ctx;

/* Writes the dirty edge records, then prints o (stolen) as the command's result. */
static int print(ctx *c, json_t *o) {
  if (c->edge && sg_edge_sync_pending(c->st, c->edge) != 0)
    json_object_set_new(o, "edgeSync", json_pack("{s:s}", "state", "pending"));
  char *s = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  if (!s) return sg__cli_fail("out of memory", NULL);
  printf("%s\n", s);
  free(s);
  return 0;
}

static const char *need(ctx *c, const char *flag) {
  const char *v = sg_args_get(c->a, flag);
  if (!v || !*v) {
    char msg[96];
    snprintf(msg, sizeof msg, "--%s is required", flag);
    sg__cli_fail("%s", msg);
    return NULL;
  }
  return v;
}

static const char *need_pos(ctx *c, const char *what) {
  if (c->a->npos < 3) {
    sg__cli_fail("missing %s", what);
    return NULL;
  }
  return c->a->pos[2];
}

static int store_fail(sg_err e, const char *what) {
  if (e == SG_E_NOT_FOUND) return sg__cli_fail("%s not found", what);
  if (e == SG_E_INVALID_LIST)
    return sg__cli_fail("list not found, not owned by the application's workspace, or not "
                        "shared with it by an active subscription",
                        NULL);
  return sg__cli_fail("store error (%s)", sg_err_name(e));
}

static int quota_flag(ctx *c, int64_t *q) {
  const char *s = sg_args_get(c->a, "monthly-quota");
  *q = -1;
  if (s && sg_parse_i64(s, 0, INT64_MAX, q))
    return sg__cli_fail("--monthly-quota must be a non-negative integer", NULL);
  return 0;
}

static int workspace_create(ctx *c) {
  const char *name = need(c, "name");
  if (!name) return 1;
  json_t *o = NULL;
  sg_err e = sg_store_workspace_create(c->st, name, &o);
  if (e != SG_E_OK) return store_fail(e, "workspace");
  json_t *out = json_pack("{s:O}", "id", json_object_get(o, "id"));
  json_decref(o);
  return print(c, out);
}

static int workspace_disable(ctx *c) {
  const char *id = need_pos(c, "workspace id");
  if (!id) return 1;
  json_t *o = NULL;
  sg_err e = sg_store_workspace_set_status(c->st, id, "disabled", &o);
  if (e != SG_E_OK) return store_fail(e, "workspace");
  return print(c, o);
}

static int application_create(ctx *c) {
  const char *ws = need(c, "workspace"), *name = ws ? need(c, "name") : NULL;
  int64_t q;
  if (!ws || !name || quota_flag(c, &q)) return 1;
  json_t *o = NULL;
  sg_err e = sg_store_application_create(c->st, ws, name, q, &o);
  if (e != SG_E_OK) return store_fail(e, "workspace");
  return print(c, o);
}

static int application_disable(ctx *c) {
  const char *id = need_pos(c, "application id");
  if (!id) return 1;
  json_t *o = NULL;
  sg_err e = sg_store_application_set_status(c->st, id, "disabled", &o);
  if (e != SG_E_OK) return store_fail(e, "application");
  return print(c, o);
}

static int application_set_quota(ctx *c) {
  const char *id = need_pos(c, "application id");
  int64_t q;
  if (!id || quota_flag(c, &q)) return 1;
  json_t *o = NULL;
  sg_err e = sg_store_application_set_quota(c->st, id, q, &o);
  if (e != SG_E_OK) return store_fail(e, "application");
  return print(c, o);
}

static int secret_key_create(ctx *c) {
  const char *app = need(c, "application");
  if (!app) return 1;
  /* The key is "sk_<id>_<secret>": the id finds the record, the secret's SHA-256 is the
   * only thing stored, and it is compared in constant time. */
  char id[32], secret[32], secret2[32], key[96];
  sg_random_id("sk_", id, sizeof id);
  sg_random_id("", secret, sizeof secret);
  sg_random_id("", secret2, sizeof secret2);
  char full_secret[64];
  snprintf(full_secret, sizeof full_secret, "%s%s", secret, secret2);
  snprintf(key, sizeof key, "%s_%s", id, full_secret);
  uint8_t digest[32];
  sg_sha256(full_secret, strlen(full_secret), digest);
  sg_err e = sg_store_secret_key_create(c->st, app, id, digest);
  if (e != SG_E_OK) return store_fail(e, "application");
  return print(c, json_pack("{s:s,s:s}", "id", id, "secretKey", key));
}

static int secret_key_revoke(ctx *c) {
  const char *id = need_pos(c, "secret key id");
  if (!id) return 1;
  json_t *o = NULL;
  sg_err e = sg_store_secret_key_revoke(c->st, id, &o);
  if (e != SG_E_OK) return store_fail(e, "secret key");
  return print(c, o);
}

static int publishable_key_create(ctx *c) {
  const char *app = need(c, "application"), *list = app ? need(c, "list") : NULL;
  if (!app || !list) return 1;
  json_t *origins = json_array();
  for (size_t i = 0; i < sg_args_count(c->a, "origin"); i++) {
    /* Stored canonical (lower case, default port dropped): the runtime compares them
     * case-insensitively anyway, and the key's record then shows what is enforced. */
    const char *o = sg_args_nth(c->a, "origin", i), *why = NULL;
    char canon[SG_ORIGIN_MAX + 1], msg[1024];
    if (sg_origin_canon(o, strlen(o), true, canon, sizeof canon, &why) < 0) {
      json_decref(origins);
      snprintf(msg, sizeof msg,
               "bad --origin '%.300s': %s (want http(s)://host[:port], "
               "optionally https://*.example.com)",
               o, why);
      return sg__cli_fail("%s", msg);
    }
    json_array_append_new(origins, json_string(canon));
  }
  char id[32], a1[32], a2[32], key[96], digest[65];
  sg_random_id("pub_", id, sizeof id);
  sg_random_id("", a1, sizeof a1);
  sg_random_id("", a2, sizeof a2);
  snprintf(key, sizeof key, "pk_%s%s", a1, a2);
  sg_edge_key_digest(key, strlen(key), digest);
  json_t *rec = NULL;
  sg_err e = sg_store_publishable_key_create(c->st, id, app, list, digest, origins, &rec);
  json_decref(origins);
  json_decref(rec);
  if (e != SG_E_OK) return store_fail(e, "application");
  return print(c, json_pack("{s:s,s:s}", "id", id, "publishableKey", key));
}

static int publishable_key_revoke(ctx *c) {
  const char *id = need_pos(c, "publishable key id");
  if (!id) return 1;
  json_t *rec = NULL;
  char digest[65];
  sg_err e = sg_store_publishable_key_revoke(c->st, id, &rec, digest);
  json_decref(rec);
  if (e != SG_E_OK) return store_fail(e, "publishable key");
  return print(c, json_pack("{s:s,s:s}", "id", id, "status", "revoked"));
}

static int signing_key_rotate(ctx *c) {
  uint8_t pk[32], sk[64];
  char kid[32];
  crypto_sign_keypair(pk, sk);
  sg_random_id("kid_", kid, sizeof kid);
  sg_err e = sg_store_signing_key_add(c->st, kid, sk, pk, sg_now_s());
  sodium_memzero(sk, sizeof sk);
  if (e != SG_E_OK) return store_fail(e, "signing key");
  return print(c, json_pack("{s:s,s:s}", "kid", kid, "alg", "EdDSA"));
}

static int subscription_create(ctx *c) {
  const char *ws = need(c, "workspace"), *list = ws ? need(c, "list") : NULL;
  if (!ws || !list) return 1;
  json_t *rec = NULL;
  sg_err e = sg_store_subscription_create(c->st, ws, list, &rec);
  if (e == SG_E_INVALID_LIST)
    return sg__cli_fail("list not found, not shared, or owned by the workspace itself", NULL);
  if (e != SG_E_OK) return store_fail(e, "workspace");
  json_t *out = json_pack("{s:O}", "id", json_object_get(rec, "id"));
  json_decref(rec);
  return print(c, out);
}

static int subscription_cancel(ctx *c) {
  const char *id = need_pos(c, "subscription id");
  if (!id) return 1;
  json_t *rec = NULL;
  sg_err e = sg_store_subscription_cancel(c->st, id, &rec);
  json_decref(rec);
  if (e != SG_E_OK) return store_fail(e, "subscription");
  return print(c, json_pack("{s:s,s:s}", "id", id, "status", "cancelled"));
}

/* `admin <noun> list`: {"data": [records]} with the filters the noun takes. The store
 * never selects a key's digest, so no secret can be printed. */
static int list_of(ctx *c, const char *what) {
  json_t *data = NULL;
  sg_err e = sg_store_admin_list(c->st, what, sg_args_get(c->a, "application"),
                                 sg_args_get(c->a, "list"), sg_args_get(c->a, "workspace"), &data);
  if (e != SG_E_OK) return store_fail(e, what);
  return print(c, json_pack("{s:o}", "data", data));
}

static int workspace_list(ctx *c) { return list_of(c, "workspaces"); }
static int application_list(ctx *c) { return list_of(c, "applications"); }
static int secret_key_list(ctx *c) { return list_of(c, "secret-keys"); }
static int publishable_key_list(ctx *c) { return list_of(c, "publishable-keys"); }
static int subscription_list(ctx *c) { return list_of(c, "subscriptions"); }

typedef struct {
  const char *noun, *verb;
  int (*fn)(ctx *);
  const char *usage;
} admin_cmd;

static const admin_cmd cmds[] = {
    {"workspace", "create", workspace_create, "workspace create --name N"},
    {"workspace", "disable", workspace_disable, "workspace disable ID"},
    {"application", "create", application_create,
     "application create --workspace W --name N [--monthly-quota N]"},
    {"application", "disable", application_disable, "application disable ID"},
    {"application", "set-quota", application_set_quota,
     "application set-quota ID --monthly-quota N (omit the flag for unlimited)"},
    {"secret-key", "create", secret_key_create, "secret-key create --application A"},
    {"secret-key", "revoke", secret_key_revoke, "secret-key revoke ID"},
    {"publishable-key", "create", publishable_key_create,
     "publishable-key create --application A --list L [--origin O]..."},
    {"publishable-key", "revoke", publishable_key_revoke, "publishable-key revoke ID"},
    {"subscription", "create", subscription_create, "subscription create --workspace W --list L"},
    {"subscription", "cancel", subscription_cancel, "subscription cancel ID"},
    {"signing-key", "rotate", signing_key_rotate, "signing-key rotate"},
    {"workspace", "list", workspace_list, "workspace list"},
    {"application", "list", application_list, "application list [--workspace W]"},
    {"secret-key", "list", secret_key_list, "secret-key list [--application A] [--workspace W]"},
    {"publishable-key", "list", publishable_key_list,
     "publishable-key list [--application A] [--list L] [--workspace W]"},
    {"subscription", "list", subscription_list, "subscription list [--workspace W] [--list L]"},
    {NULL, NULL, NULL, NULL},
};

int sg_cmd_admin(int argc, char **argv) {
  sg_args a;
  char err[256];
  if (sg_args_parse(&a, argc, argv, admin_flags, err, sizeof err)) return sg__cli_fail("%s", err);
  const admin_cmd *cmd = NULL;
  for (const admin_cmd *k = cmds; k->noun && a.npos >= 2; k++)
    if (strcmp(k->noun, a.pos[0]) == 0 && strcmp(k->verb, a.pos[1]) == 0) cmd = k;
  if (!cmd) {
    /* The usage goes inside the one JSON error object: stderr stays machine-readable. */
    char usage[2048] = "";
    for (const admin_cmd *k = cmds; k->noun; k++) {
      strncat(usage, k == cmds ? "" : "; ", sizeof usage - strlen(usage) - 1);
      strncat(usage, k->usage, sizeof usage - strlen(usage) - 1);
    }
    return sg__cli_fail("unknown admin command; usage: suggestd admin <command> --data-dir DIR, "
                        "where <command> is one of: %s",
                        usage);
  }
  ctx c = {.a = &a};
  if (sg__cli_open(&a, &c.st, &c.edge)) return 1;
  int rc = cmd->fn(&c);
  sg_store_close(c.st);
  sg_edge_close(c.edge);
  return rc;
}
