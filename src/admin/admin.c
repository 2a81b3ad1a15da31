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
#include "control/keys.h"
#include "dashboard/auth.h"
#include "store/members.h"

static const sg_flag_spec admin_flags[] = {
    {"data-dir", true, false},
    {"database", true, false},
    {"edge", true, false},
    {"name", true, false},
    {"workspace", true, false},
    {"application", true, false},
    {"list", true, false},
    {"origin", true, true},
    {"monthly-quota", true, false},
    {"email", true, false},
    {"role", true, false},
    {"password-file", true, false},
    {"max-lists-per-workspace", true, false},
    {"keep-versions", true, false},
    {"max-members-per-workspace", true, false},
    {"max-publishable-keys-per-application", true, false},
    {"max-secret-keys-per-application", true, false},
    {"to", true, false},
    {"from", true, false},
    {NULL, false, false},
};

typedef struct {
  sg_args *a;
  sg_store *st;
  sg_edge *edge;
} ctx;

/* The id the command printed, for its audit entry. */
static char printed_id[64];

/* Writes the dirty edge records, then prints o (stolen) as the command's result. */
static int print(ctx *c, json_t *o) {
  if (c->edge && sg_edge_sync_pending(c->st, c->edge) != 0)
    json_object_set_new(o, "edgeSync", json_pack("{s:s}", "state", "pending"));
  const char *id = json_string_value(json_object_get(o, "id"));
  snprintf(printed_id, sizeof printed_id, "%s", id ? id : "");
  char *s = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  if (!s) return sg__cli_fail("out of memory", NULL);
  printf("%s\n", s);
  free(s);
  return 0;
}

static int edge_rebuild(ctx *c) { return sg__admin_edge_rebuild(c->st, c->edge); }
static int backup(ctx *c) { return sg__admin_backup(c->st, c->edge, sg_args_get(c->a, "to")); }

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
  /* A limit names itself and the flag that raises it (the error table's message). */
  if (e == SG_E_LIST_LIMIT || e == SG_E_MEMBER_LIMIT || e == SG_E_SECRET_KEY_LIMIT ||
      e == SG_E_PUBLISHABLE_KEY_LIMIT)
    return sg__cli_fail("%s", sg_err_message(e));
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
  char id[32], key[96];
  sg_err e = sg_secret_key_issue(c->st, app, id, key);
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
  char id[32], key[96];
  sg_err e = sg_publishable_key_issue(c->st, NULL, app, list, origins, id, key, NULL);
  json_decref(origins);
  if (e != SG_E_OK) return store_fail(e, "application");
  return print(c, json_pack("{s:s,s:s}", "id", id, "publishableKey", key));
}

static int publishable_key_revoke(ctx *c) {
  const char *id = need_pos(c, "publishable key id");
  if (!id) return 1;
  sg_err e = sg_publishable_key_retire(c->st, NULL, id, NULL);
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
/* ---- members (docs/DESIGN.md §7) ------------------------------------------------------ */

/* Reads the password from the first line of a file (its line end stripped) and hashes it
 * into hash: a file, not a flag, so the password never shows in the process list or the
 * shell history. Returns 0, or prints the error and returns 1. */
static int password_file_hash(const char *path, char hash[SG_PASSWORD_HASH_BYTES]) {
  char *text = NULL;
  size_t len = 0;
  if (sg_read_file(path, 64 * 1024, &text, &len))
    return sg__cli_fail("cannot read --password-file '%s'", path);
  size_t line = strcspn(text, "\n");
  if (line && text[line - 1] == '\r') line--;
  text[line] = '\0';
  const char *problem = sg_password_problem(text, line);
  int hrc = problem ? 0 : sg_password_hash(text, line, hash);
  sodium_memzero(text, len);
  free(text);
  if (problem) return sg__cli_fail("the password %s", problem);
  if (hrc) return sg__cli_fail("out of memory hashing the password", NULL);
  return 0;
}

static int member_create(ctx *c) {
  const char *ws = need(c, "workspace"), *em = ws ? need(c, "email") : NULL;
  const char *role_s = em ? need(c, "role") : NULL;
  const char *pwf = role_s ? need(c, "password-file") : NULL;
  if (!pwf) return 1;
  char email[256];
  if (sg_email_normalize(em, email))
    return sg__cli_fail("--email '%s' is not an email address", em);
  sg_role role = sg_role_parse(role_s);
  if (role == SG_ROLE_NONE)
    return sg__cli_fail("--role must be one of viewer, data_steward, admin, owner", NULL);
  char hash[SG_PASSWORD_HASH_BYTES];
  if (password_file_hash(pwf, hash)) return 1;
  json_t *rec = NULL;
  sg_err e = sg_store_member_create(c->st, ws, email, role, hash, &rec);
  if (e == SG_E_MEMBER_EXISTS)
    return sg__cli_fail("a member with email '%s' already exists in this workspace", email);
  if (e == SG_E_EMAIL_MEMBERSHIP_LIMIT)
    return sg__cli_fail("email '%s' is already a member of 20 workspaces, the most it may be",
                        email);
  if (e != SG_E_OK) return store_fail(e, "workspace");
  int rc = print(c, json_pack("{s:O}", "id", json_object_get(rec, "id")));
  json_decref(rec);
  return rc;
}

/* An operator's way back in when a member (even the last owner) forgot the password: a
 * new password from a file; every session of the member ends. */
static int member_set_password(ctx *c) {
  const char *id = need_pos(c, "member id");
  const char *pwf = id ? need(c, "password-file") : NULL;
  if (!pwf) return 1;
  char hash[SG_PASSWORD_HASH_BYTES];
  if (password_file_hash(pwf, hash)) return 1;
  sg_err e = sg_store_member_set_password(c->st, id, hash, NULL);
  if (e != SG_E_OK) return store_fail(e, "active member");
  return print(c, json_pack("{s:s,s:b}", "id", id, "passwordChanged", 1));
}

static int member_list(ctx *c) {
  const char *ws = need(c, "workspace");
  if (!ws) return 1;
  json_t *arr = NULL;
  sg_err e = sg_store_member_list(c->st, ws, &arr);
  if (e != SG_E_OK) return store_fail(e, "workspace");
  return print(c, json_pack("{s:o}", "data", arr));
}

static int member_disable(ctx *c) {
  const char *id = need_pos(c, "member id");
  if (!id) return 1;
  json_t *rec = NULL;
  sg_err e = sg_store_member_disable(c->st, NULL, id, &rec);
  if (e == SG_E_LAST_OWNER)
    return sg__cli_fail("%s is the workspace's last owner; make another member an owner first", id);
  if (e != SG_E_OK) return store_fail(e, "member");
  return print(c, rec);
}

/* Records a successful command in the audit log: actor "cli", the command as the action,
 * the id it printed (or was given) as the target, and the workspace it acted in when the
 * command names one. Never a secret: the arguments are not copied. */
static void audit(ctx *c, const char *noun, const char *verb) {
  char action[64];
  snprintf(action, sizeof action, "%s.%s", noun, verb);
  const char *target = printed_id[0] ? printed_id : c->a->npos >= 3 ? c->a->pos[2] : NULL;
  const char *ws = sg_args_get(c->a, "workspace");
  const char *app = sg_args_get(c->a, "application");
  json_t *rec = NULL;
  if (!ws && target && strncmp(target, "wsp_", 4) == 0) ws = target;
  if (!ws && !app && target && strncmp(target, "app_", 4) == 0) app = target;
  if (!ws && app && sg_store_application_get(c->st, app, &rec) == SG_E_OK)
    ws = json_string_value(json_object_get(rec, "workspaceId"));
  char key_ws[64];
  if (!ws && target && strncmp(target, "sk_", 3) == 0 &&
      sg_store_secret_key_workspace(c->st, target, key_ws) == SG_E_OK)
    ws = key_ws;
  if (!ws && target && strncmp(target, "pub_", 4) == 0 &&
      sg_store_publishable_key_workspace(c->st, target, key_ws) == SG_E_OK)
    ws = key_ws;
  json_t *mrec = NULL;
  if (!ws && target && strncmp(target, "mbr_", 4) == 0 &&
      sg_store_member_get(c->st, NULL, target, &mrec) == SG_E_OK)
    ws = json_string_value(json_object_get(mrec, "workspaceId"));
  sg_audit_entry e = {
      .workspace_id = ws, .actor = "cli", .action = action, .target = target, .status = 200};
  sg_store_audit_add(c->st, &e);
  json_decref(rec);
  json_decref(mrec);
}

/* ---- admin init (issue 27: a fleet's first run) ------------------------------------------ */

/* The flags a printed next command needs to reach the same store and edge. */
static void store_flags(ctx *c, char *out, size_t n) {
  const char *dir = sg_args_get(c->a, "data-dir"), *db = sg_args_get(c->a, "database");
  const char *edge = sg_args_get(c->a, "edge");
  size_t o = 0;
  out[0] = '\0';
  if (dir) o += (size_t)snprintf(out + o, o < n ? n - o : 0, " --data-dir %s", dir);
  if (db) o += (size_t)snprintf(out + o, o < n ? n - o : 0, " --database %s", db);
  if (edge) o += (size_t)snprintf(out + o, o < n ? n - o : 0, " --edge %s", edge);
}

/* `admin init`: what `make run` does on a first run, for a fleet (a PostgreSQL database
 * and a Redis edge, or a data dir): a workspace, an application, a secret key, a token
 * signing key and an owner, then the commands to go on with. Refused when the store
 * already holds a workspace, so running it twice creates nothing twice. The owner's
 * password comes from --password-file, or is generated and shown once, as the secret key. */
static int init(ctx *c) {
  json_t *data = NULL;
  sg_err e = sg_store_admin_list(c->st, "workspaces", NULL, NULL, NULL, &data);
  if (e != SG_E_OK) return store_fail(e, "workspaces");
  size_t existing = json_array_size(data);
  json_decref(data);
  if (existing)
    return sg__cli_fail("this store is already initialised (it holds a workspace): use "
                        "`suggestd admin workspace list` and the other admin commands",
                        NULL);
  const char *ws_name = sg_args_get(c->a, "name");
  const char *email_in = sg_args_get(c->a, "email");
  char email[256];
  if (sg_email_normalize(email_in ? email_in : "owner@localhost", email))
    return sg__cli_fail("--email '%s' is not an email address", email_in);
  char hash[SG_PASSWORD_HASH_BYTES], password[32] = "";
  const char *pwf = sg_args_get(c->a, "password-file");
  if (pwf) {
    if (password_file_hash(pwf, hash)) return 1;
  } else {
    static const char alphabet[] = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    uint8_t r[20];
    sg_random_bytes(r, sizeof r);
    for (size_t i = 0; i < sizeof r; i++) password[i] = alphabet[r[i] % (sizeof alphabet - 1)];
    password[sizeof r] = '\0';
    if (sg_password_hash(password, strlen(password), hash))
      return sg__cli_fail("out of memory hashing the password", NULL);
  }
  json_t *wso = NULL, *appo = NULL, *mem = NULL;
  e = sg_store_workspace_create(c->st, ws_name ? ws_name : "My workspace", &wso);
  if (e != SG_E_OK) return store_fail(e, "workspace");
  const char *ws = json_string_value(json_object_get(wso, "id"));
  e = sg_store_application_create(c->st, ws, "My app", -1, &appo);
  const char *app = e == SG_E_OK ? json_string_value(json_object_get(appo, "id")) : NULL;
  char key_id[32], key[96], kid[32];
  if (e == SG_E_OK) e = sg_secret_key_issue(c->st, app, key_id, key);
  uint8_t pk[32], sk[64];
  if (e == SG_E_OK) {
    crypto_sign_keypair(pk, sk);
    sg_random_id("kid_", kid, sizeof kid);
    e = sg_store_signing_key_add(c->st, kid, sk, pk, sg_now_s());
    sodium_memzero(sk, sizeof sk);
  }
  if (e == SG_E_OK) e = sg_store_member_create(c->st, ws, email, SG_ROLE_OWNER, hash, &mem);
  sodium_memzero(hash, sizeof hash);
  if (e != SG_E_OK) {
    json_decref(wso);
    json_decref(appo);
    json_decref(mem);
    return store_fail(e, "init");
  }
  char flags[1200], cmd[3][1400];
  store_flags(c, flags, sizeof flags);
  snprintf(cmd[0], sizeof cmd[0], "suggestd control%s --control-listen 127.0.0.1:8080", flags);
  const char *edge = sg_args_get(c->a, "edge"), *dir = sg_args_get(c->a, "data-dir");
  if (edge)
    snprintf(cmd[1], sizeof cmd[1], "suggestd runtime --edge %s --runtime-listen 127.0.0.1:8081",
             edge);
  else
    snprintf(cmd[1], sizeof cmd[1],
             "suggestd runtime --edge %s/edge --runtime-listen 127.0.0.1:8081", dir ? dir : ".");
  snprintf(cmd[2], sizeof cmd[2],
           "suggestd admin publishable-key create --application %s --list LIST_ID%s", app, flags);
  json_t *out =
      json_pack("{s:s,s:s,s:{s:s,s:s},s:s,s:{s:O,s:s,s:s*},s:[s,s,s]}", "workspaceId", ws,
                "applicationId", app, "secretKey", "id", key_id, "secretKey", key, "signingKeyId",
                kid, "owner", "id", json_object_get(mem, "id"), "email", email, "password",
                password[0] ? password : NULL, "next", cmd[0], cmd[1], cmd[2]);
  sodium_memzero(key, sizeof key);
  sodium_memzero(password, sizeof password);
  char ws_id[64];
  snprintf(ws_id, sizeof ws_id, "%s", ws);
  json_decref(wso);
  json_decref(appo);
  json_decref(mem);
  int rc = print(c, out);
  snprintf(printed_id, sizeof printed_id, "%s", ws_id); /* the audit entry's target */
  return rc;
}

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
    {"member", "create", member_create,
     "member create --workspace W --email E --role viewer|data_steward|admin|owner "
     "--password-file F"},
    {"member", "list", member_list, "member list --workspace W"},
    {"member", "disable", member_disable, "member disable ID"},
    {"member", "set-password", member_set_password, "member set-password ID --password-file F"},
    {"edge", "rebuild", edge_rebuild, "edge rebuild"},
    {"init", NULL, init,
     "init [--name WORKSPACE] [--email OWNER] [--password-file F] (a new store's first run)"},
    {"backup", NULL, backup, "backup --to FILE"},
    {"restore", NULL, NULL, "restore --from FILE (into an empty --data-dir)"},
    {NULL, NULL, NULL, NULL},
};

void sg__admin_usage(FILE *f) {
  for (const admin_cmd *k = cmds; k->noun; k++) fprintf(f, "  %s\n", k->usage);
}

int sg_cmd_admin(int argc, char **argv) {
  sg_args a;
  char err[256];
  if (sg_args_parse(&a, argc, argv, admin_flags, err, sizeof err)) return sg__cli_fail("%s", err);
  const admin_cmd *cmd = NULL;
  /* Two words (noun verb), or one for the commands of the whole store (backup, restore). */
  for (const admin_cmd *k = cmds; k->noun && a.npos >= 1; k++)
    if (strcmp(k->noun, a.pos[0]) == 0 &&
        (k->verb ? a.npos >= 2 && strcmp(k->verb, a.pos[1]) == 0 : a.npos == 1))
      cmd = k;
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
  /* A restore opens no store: it creates one, in an empty data dir. */
  if (!cmd->fn) return sg__admin_restore(&a);
  ctx c = {.a = &a};
  if (sg__cli_open(&a, &c.st, &c.edge)) return 1;
  int rc = cmd->fn(&c);
  if (rc == 0 && cmd->verb && strcmp(cmd->verb, "list") != 0) audit(&c, cmd->noun, cmd->verb);
  sg_store_close(c.st);
  sg_edge_close(c.edge);
  return rc;
}
