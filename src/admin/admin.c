/*
 * `suggestd admin …`: operator commands on the store, mirrored to the edge store so the
 * runtime sees them within a second. Each prints one JSON object on stdout and exits 0,
 * or prints {"error": …} on stderr and exits non-zero. Works while `serve` runs on the
 * same data dir (SQLite WAL + busy timeout; the edge store serialises writers).
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/util.h"
#include "control/keys.h"
#include "dashboard/auth.h"
#include "store/members.h"

static const sg_flag_spec admin_flags[] = {
    {"data-dir", true, false}, {"database", true, false},  {"edge", true, false},
    {"name", true, false},     {"workspace", true, false}, {"application", true, false},
    {"list", true, false},     {"origin", true, true},     {"monthly-quota", true, false},
    {"email", true, false},    {"role", true, false},      {"password-file", true, false},
    {NULL, false, false},
};

typedef struct {
  sg_args *a;
  sg_store *st;
  sg_edge *edge;
} ctx;

/* The id the command printed, for its audit entry. */
static char printed_id[64];

static int print(json_t *o) {
  const char *id = json_string_value(json_object_get(o, "id"));
  snprintf(printed_id, sizeof printed_id, "%s", id ? id : "");
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

/* Writes rec (not stolen) as edge record (k, id). */
static int mirror(ctx *c, sg_edge_kind k, const char *id, const json_t *rec) {
  char *s = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
  int rc = s ? sg_edge_put(c->edge, k, id, s, strlen(s), NULL) : -1;
  free(s);
  if (rc) return sg__cli_fail("cannot write the edge record for %s", id);
  return 0;
}

static int mirror_app(ctx *c, const char *id) {
  json_t *rec = NULL;
  sg_err e = sg_store_application_get(c->st, id, &rec);
  if (e != SG_E_OK) return store_fail(e, "application");
  int rc = mirror(c, SG_EDGE_APP, id, rec);
  json_decref(rec);
  return rc;
}

static int mirror_workspace(ctx *c, const char *id) {
  json_t *rec = NULL;
  sg_err e = sg_store_workspace_get(c->st, id, &rec);
  if (e != SG_E_OK) return store_fail(e, "workspace");
  int rc = mirror(c, SG_EDGE_WORKSPACE, id, rec);
  json_decref(rec);
  return rc;
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
  const char *id = json_string_value(json_object_get(o, "id"));
  int rc = mirror_workspace(c, id);
  if (!rc) rc = print(json_pack("{s:s}", "id", id));
  json_decref(o);
  return rc;
}

static int workspace_disable(ctx *c) {
  const char *id = need_pos(c, "workspace id");
  if (!id) return 1;
  json_t *o = NULL;
  sg_err e = sg_store_workspace_set_status(c->st, id, "disabled", &o);
  if (e != SG_E_OK) return store_fail(e, "workspace");
  if (mirror_workspace(c, id)) {
    json_decref(o);
    return 1;
  }
  return print(o);
}

static int application_create(ctx *c) {
  const char *ws = need(c, "workspace"), *name = ws ? need(c, "name") : NULL;
  int64_t q;
  if (!ws || !name || quota_flag(c, &q)) return 1;
  json_t *o = NULL;
  sg_err e = sg_store_application_create(c->st, ws, name, q, &o);
  if (e != SG_E_OK) return store_fail(e, "workspace");
  const char *id = json_string_value(json_object_get(o, "id"));
  if (mirror_app(c, id)) {
    json_decref(o);
    return 1;
  }
  return print(o);
}

static int application_disable(ctx *c) {
  const char *id = need_pos(c, "application id");
  if (!id) return 1;
  json_t *o = NULL;
  sg_err e = sg_store_application_set_status(c->st, id, "disabled", &o);
  if (e != SG_E_OK) return store_fail(e, "application");
  if (mirror_app(c, id)) {
    json_decref(o);
    return 1;
  }
  return print(o);
}

static int application_set_quota(ctx *c) {
  const char *id = need_pos(c, "application id");
  int64_t q;
  if (!id || quota_flag(c, &q)) return 1;
  json_t *o = NULL;
  sg_err e = sg_store_application_set_quota(c->st, id, q, &o);
  if (e != SG_E_OK) return store_fail(e, "application");
  if (mirror_app(c, id)) {
    json_decref(o);
    return 1;
  }
  return print(o);
}

static int secret_key_create(ctx *c) {
  const char *app = need(c, "application");
  if (!app) return 1;
  char id[32], key[96];
  sg_err e = sg_secret_key_issue(c->st, app, id, key);
  if (e != SG_E_OK) return store_fail(e, "application");
  return print(json_pack("{s:s,s:s}", "id", id, "secretKey", key));
}

static int secret_key_revoke(ctx *c) {
  const char *id = need_pos(c, "secret key id");
  if (!id) return 1;
  json_t *o = NULL;
  sg_err e = sg_store_secret_key_revoke(c->st, id, &o);
  if (e != SG_E_OK) return store_fail(e, "secret key");
  return print(o);
}

/* An origin is scheme://host[:port], optionally with one leading "*." label. */
static bool valid_origin(const char *o) {
  const char *p = strstr(o, "://");
  if (!p || p == o || strlen(o) > 255) return false;
  for (const char *s = o; s < p; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '+' || *s == '-' ||
          *s == '.'))
      return false;
  const char *h = p + 3;
  if (strncmp(h, "*.", 2) == 0) h += 2;
  if (!*h) return false;
  for (; *h; h++)
    if (!((*h >= 'a' && *h <= 'z') || (*h >= 'A' && *h <= 'Z') || (*h >= '0' && *h <= '9') ||
          *h == '-' || *h == '.' || *h == ':' || *h == '[' || *h == ']'))
      return false;
  return true;
}

bool sg__cli_origin_valid(const char *o) { return valid_origin(o); }

static int publishable_key_create(ctx *c) {
  const char *app = need(c, "application"), *list = app ? need(c, "list") : NULL;
  if (!app || !list) return 1;
  json_t *origins = json_array();
  for (size_t i = 0; i < sg_args_count(c->a, "origin"); i++) {
    const char *o = sg_args_nth(c->a, "origin", i);
    if (!valid_origin(o)) {
      json_decref(origins);
      return sg__cli_fail("bad --origin '%s' (want scheme://host[:port], optionally *.host)", o);
    }
    json_array_append_new(origins, json_string(o));
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
  if (e != SG_E_OK) return store_fail(e, "application");
  /* The runtime needs the application and workspace records to resolve the key. */
  int rc = mirror_app(c, app);
  json_t *appr = NULL;
  if (!rc && sg_store_application_get(c->st, app, &appr) == SG_E_OK) {
    rc = mirror_workspace(c, json_string_value(json_object_get(appr, "workspaceId")));
    json_decref(appr);
  }
  if (!rc) rc = mirror(c, SG_EDGE_KEY, digest, rec);
  json_decref(rec);
  if (rc) return rc;
  return print(json_pack("{s:s,s:s}", "id", id, "publishableKey", key));
}

static int publishable_key_revoke(ctx *c) {
  const char *id = need_pos(c, "publishable key id");
  if (!id) return 1;
  json_t *rec = NULL;
  char digest[65];
  sg_err e = sg_store_publishable_key_revoke(c->st, id, &rec, digest);
  if (e != SG_E_OK) return store_fail(e, "publishable key");
  int rc = mirror(c, SG_EDGE_KEY, digest, rec);
  json_decref(rec);
  if (rc) return rc;
  return print(json_pack("{s:s,s:s}", "id", id, "status", "revoked"));
}

/* Republishes every signing key's public half; keys retired longer ago than a token
 * lives (plus skew and a margin) are removed from the edge store. */
static int mirror_signing_keys(ctx *c) {
  json_t *keys = NULL;
  sg_err e = sg_store_signing_keys_public(c->st, &keys);
  if (e != SG_E_OK) return store_fail(e, "signing key");
  int64_t now = sg_now_s();
  size_t i;
  json_t *k;
  int rc = 0;
  json_array_foreach(keys, i, k) {
    const char *kid = json_string_value(json_object_get(k, "kid"));
    int64_t retired = json_integer_value(json_object_get(k, "retiredAtUnix"));
    json_object_del(k, "retiredAtUnix");
    if (retired && retired + 2 * 3600 < now) {
      sg_edge_delete(c->edge, SG_EDGE_SIGNING_KEY, kid, NULL);
      continue;
    }
    if ((rc = mirror(c, SG_EDGE_SIGNING_KEY, kid, k))) break;
  }
  json_decref(keys);
  return rc;
}

static int signing_key_rotate(ctx *c) {
  uint8_t pk[32], sk[64];
  char kid[32];
  crypto_sign_keypair(pk, sk);
  sg_random_id("kid_", kid, sizeof kid);
  sg_err e = sg_store_signing_key_add(c->st, kid, sk, pk, sg_now_s());
  sodium_memzero(sk, sizeof sk);
  if (e != SG_E_OK) return store_fail(e, "signing key");
  if (mirror_signing_keys(c)) return 1;
  return print(json_pack("{s:s,s:s}", "kid", kid, "alg", "EdDSA"));
}

static int subscription_create(ctx *c) {
  const char *ws = need(c, "workspace"), *list = ws ? need(c, "list") : NULL;
  if (!ws || !list) return 1;
  json_t *rec = NULL;
  sg_err e = sg_store_subscription_create(c->st, ws, list, &rec);
  if (e == SG_E_INVALID_LIST)
    return sg__cli_fail("list not found, not shared, or owned by the workspace itself", NULL);
  if (e != SG_E_OK) return store_fail(e, "workspace");
  const char *id = json_string_value(json_object_get(rec, "id"));
  int rc = mirror(c, SG_EDGE_SUBSCRIPTION, id, rec);
  if (!rc) rc = print(json_pack("{s:s}", "id", id));
  json_decref(rec);
  return rc;
}

static int subscription_cancel(ctx *c) {
  const char *id = need_pos(c, "subscription id");
  if (!id) return 1;
  json_t *rec = NULL;
  sg_err e = sg_store_subscription_cancel(c->st, id, &rec);
  if (e != SG_E_OK) return store_fail(e, "subscription");
  int rc = mirror(c, SG_EDGE_SUBSCRIPTION, id, rec);
  if (!rc) rc = print(json_pack("{s:s,s:s}", "id", id, "status", "cancelled"));
  json_decref(rec);
  return rc;
}

/* ---- members (DESIGN §7) -------------------------------------------------------------- */

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
    return sg__cli_fail("a member with email '%s' already exists", email);
  if (e != SG_E_OK) return store_fail(e, "workspace");
  int rc = print(json_pack("{s:O}", "id", json_object_get(rec, "id")));
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
  return print(json_pack("{s:s,s:b}", "id", id, "passwordChanged", 1));
}

static int member_list(ctx *c) {
  const char *ws = need(c, "workspace");
  if (!ws) return 1;
  json_t *arr = NULL;
  sg_err e = sg_store_member_list(c->st, ws, &arr);
  if (e != SG_E_OK) return store_fail(e, "workspace");
  return print(json_pack("{s:o}", "data", arr));
}

static int member_disable(ctx *c) {
  const char *id = need_pos(c, "member id");
  if (!id) return 1;
  json_t *rec = NULL;
  sg_err e = sg_store_member_disable(c->st, NULL, id, &rec);
  if (e == SG_E_LAST_OWNER)
    return sg__cli_fail("%s is the workspace's last owner; make another member an owner first", id);
  if (e != SG_E_OK) return store_fail(e, "member");
  return print(rec);
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
      .workspace_id = ws, .actor = "cli", .action = action, .target = target, .status = 0};
  sg_store_audit_add(c->st, &e);
  json_decref(rec);
  json_decref(mrec);
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
    {"member", "create", member_create,
     "member create --workspace W --email E --role viewer|data_steward|admin|owner "
     "--password-file F"},
    {"member", "list", member_list, "member list --workspace W"},
    {"member", "disable", member_disable, "member disable ID"},
    {"member", "set-password", member_set_password, "member set-password ID --password-file F"},
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
    char usage[1024] = "";
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
  if (rc == 0 && strcmp(cmd->verb, "list") != 0) audit(&c, cmd->noun, cmd->verb);
  sg_store_close(c.st);
  sg_edge_close(c.edge);
  return rc;
}
