/* Unit tests of members, sessions and the audit log in the store
 * (src/store/sqlite/members.c), against a real database in a temporary directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "store/members.h"
#include "store_fixture.h"

static char *member(store_fixture *f, const char *ws, const char *email, sg_role role,
                    char out[64]) {
  json_t *rec = NULL;
  assert_int_equal(sg_store_member_create(f->st, ws, email, role, "$argon2id$fake", &rec), SG_E_OK);
  snprintf(out, 64, "%s", json_string_value(json_object_get(rec, "id")));
  assert_string_equal(json_string_value(json_object_get(rec, "role")), sg_role_name(role));
  assert_null(json_object_get(rec, "passwordHash"));
  json_decref(rec);
  return out;
}

static void test_roles(void **state) {
  (void)state;
  assert_int_equal(sg_role_parse("viewer"), SG_ROLE_VIEWER);
  assert_int_equal(sg_role_parse("data_steward"), SG_ROLE_DATA_STEWARD);
  assert_int_equal(sg_role_parse("admin"), SG_ROLE_ADMIN);
  assert_int_equal(sg_role_parse("owner"), SG_ROLE_OWNER);
  assert_int_equal(sg_role_parse("Owner"), SG_ROLE_NONE);
  assert_int_equal(sg_role_parse("none"), SG_ROLE_NONE);
  assert_int_equal(sg_role_parse(NULL), SG_ROLE_NONE);
  assert_true(SG_ROLE_VIEWER < SG_ROLE_DATA_STEWARD && SG_ROLE_DATA_STEWARD < SG_ROLE_ADMIN &&
              SG_ROLE_ADMIN < SG_ROLE_OWNER);
}

static void test_member_create_and_signin_lookup(void **state) {
  store_fixture *f = *state;
  char id[64];
  member(f, f->ws, "a@example.com", SG_ROLE_ADMIN, id);
  json_t *rec = NULL;
  assert_int_equal(sg_store_member_create(f->st, f->ws, "a@example.com", SG_ROLE_VIEWER, "h", &rec),
                   SG_E_MEMBER_EXISTS);
  assert_null(rec);
  assert_int_equal(
      sg_store_member_create(f->st, "wsp_nope", "b@example.com", SG_ROLE_VIEWER, "h", &rec),
      SG_E_NOT_FOUND);
  sg_signin_candidate cand[SG_MEMBERSHIPS_PER_EMAIL];
  size_t n = 99;
  assert_int_equal(sg_store_member_for_signin(f->st, "a@example.com", cand, &n), SG_E_OK);
  assert_int_equal(n, 1);
  assert_string_equal(cand[0].m.id, id);
  assert_string_equal(cand[0].m.workspace_id, f->ws);
  assert_int_equal(cand[0].m.role, SG_ROLE_ADMIN);
  assert_string_equal(cand[0].hash, "$argon2id$fake");
  assert_string_equal(cand[0].m.email, "a@example.com");
  assert_string_equal(cand[0].workspace_name, "W");
  /* The member read back has each field from its own column. */
  assert_int_equal(sg_store_member_get(f->st, f->ws, id, &rec), SG_E_OK);
  assert_string_equal(json_string_value(json_object_get(rec, "id")), id);
  assert_string_equal(json_string_value(json_object_get(rec, "email")), "a@example.com");
  assert_string_equal(json_string_value(json_object_get(rec, "role")), "admin");
  json_decref(rec);
  rec = NULL;
  assert_int_equal(sg_store_member_for_signin(f->st, "z@example.com", cand, &n), SG_E_OK);
  assert_int_equal(n, 0);
  /* A disabled workspace's members cannot sign in. */
  json_t *o = NULL;
  assert_int_equal(sg_store_workspace_set_status(f->st, f->ws, "disabled", &o), SG_E_OK);
  json_decref(o);
  assert_int_equal(sg_store_member_for_signin(f->st, "a@example.com", cand, &n), SG_E_OK);
  assert_int_equal(n, 0);
}

/* An email is unique per workspace: another workspace's member with the same email is an
 * independent member (its own id, role and password), and sign-in sees both, oldest
 * first. At most SG_MEMBERSHIPS_PER_EMAIL active members share an email. */
static void test_email_unique_per_workspace(void **state) {
  store_fixture *f = *state;
  char a[64], b[64];
  member(f, f->ws, "same@example.com", SG_ROLE_OWNER, a);
  json_t *w = NULL, *rec = NULL;
  assert_int_equal(sg_store_workspace_create(f->st, "Other", &w), SG_E_OK);
  char other[64];
  snprintf(other, sizeof other, "%s", json_string_value(json_object_get(w, "id")));
  json_decref(w);
  assert_int_equal(
      sg_store_member_create(f->st, other, "same@example.com", SG_ROLE_VIEWER, "$h2", &rec),
      SG_E_OK);
  snprintf(b, sizeof b, "%s", json_string_value(json_object_get(rec, "id")));
  assert_string_equal(json_string_value(json_object_get(rec, "workspaceId")), other);
  json_decref(rec);
  assert_string_not_equal(a, b);
  /* Each workspace still refuses a second active member with the email. */
  assert_int_equal(
      sg_store_member_create(f->st, other, "same@example.com", SG_ROLE_VIEWER, "h", &rec),
      SG_E_MEMBER_EXISTS);
  assert_int_equal(
      sg_store_member_create(f->st, f->ws, "same@example.com", SG_ROLE_VIEWER, "h", &rec),
      SG_E_MEMBER_EXISTS);
  sg_signin_candidate cand[SG_MEMBERSHIPS_PER_EMAIL];
  size_t n = 0;
  assert_int_equal(sg_store_member_for_signin(f->st, "same@example.com", cand, &n), SG_E_OK);
  assert_int_equal(n, 2);
  int first = strcmp(cand[0].m.id, a) == 0 ? 0 : 1;
  assert_string_equal(cand[first].m.id, a);
  assert_string_equal(cand[first].m.workspace_id, f->ws);
  assert_int_equal(cand[first].m.role, SG_ROLE_OWNER);
  assert_string_equal(cand[first].hash, "$argon2id$fake");
  assert_string_equal(cand[1 - first].m.id, b);
  assert_string_equal(cand[1 - first].m.workspace_id, other);
  assert_string_equal(cand[1 - first].hash, "$h2");
  /* Up to the cap, across workspaces; the next is refused, in any workspace. */
  char ws[SG_MEMBERSHIPS_PER_EMAIL][64];
  for (int i = 2; i < SG_MEMBERSHIPS_PER_EMAIL; i++) {
    assert_int_equal(sg_store_workspace_create(f->st, "More", &w), SG_E_OK);
    snprintf(ws[i], 64, "%s", json_string_value(json_object_get(w, "id")));
    json_decref(w);
    char id[64];
    member(f, ws[i], "same@example.com", SG_ROLE_VIEWER, id);
  }
  assert_int_equal(sg_store_workspace_create(f->st, "One too many", &w), SG_E_OK);
  char last[64];
  snprintf(last, sizeof last, "%s", json_string_value(json_object_get(w, "id")));
  json_decref(w);
  assert_int_equal(
      sg_store_member_create(f->st, last, "same@example.com", SG_ROLE_VIEWER, "h", &rec),
      SG_E_EMAIL_MEMBERSHIP_LIMIT);
  assert_null(rec);
  /* Still member_exists where the email already is a member. */
  assert_int_equal(
      sg_store_member_create(f->st, other, "same@example.com", SG_ROLE_VIEWER, "h", &rec),
      SG_E_MEMBER_EXISTS);
  assert_int_equal(sg_store_member_for_signin(f->st, "same@example.com", cand, &n), SG_E_OK);
  assert_int_equal(n, SG_MEMBERSHIPS_PER_EMAIL);
  /* A removed membership frees its place. */
  assert_int_equal(sg_store_member_disable(f->st, other, b, &rec), SG_E_OK);
  json_decref(rec);
  char id[64];
  member(f, last, "same@example.com", SG_ROLE_VIEWER, id);
}

static void test_last_owner_stays(void **state) {
  store_fixture *f = *state;
  char o1[64], o2[64], v[64];
  member(f, f->ws, "o1@example.com", SG_ROLE_OWNER, o1);
  member(f, f->ws, "v@example.com", SG_ROLE_VIEWER, v);
  json_t *rec = NULL;
  assert_int_equal(sg_store_member_set_role(f->st, f->ws, o1, SG_ROLE_ADMIN, &rec),
                   SG_E_LAST_OWNER);
  assert_int_equal(sg_store_member_disable(f->st, f->ws, o1, &rec), SG_E_LAST_OWNER);
  assert_int_equal(sg_store_member_disable(f->st, NULL, o1, &rec), SG_E_LAST_OWNER);
  member(f, f->ws, "o2@example.com", SG_ROLE_OWNER, o2);
  assert_int_equal(sg_store_member_set_role(f->st, f->ws, o1, SG_ROLE_ADMIN, &rec), SG_E_OK);
  assert_string_equal(json_string_value(json_object_get(rec, "role")), "admin");
  json_decref(rec);
  assert_int_equal(sg_store_member_disable(f->st, f->ws, o2, &rec), SG_E_LAST_OWNER);
  /* Another workspace's id is not found. */
  json_t *w = NULL;
  assert_int_equal(sg_store_workspace_create(f->st, "Other", &w), SG_E_OK);
  const char *other = json_string_value(json_object_get(w, "id"));
  assert_int_equal(sg_store_member_set_role(f->st, other, v, SG_ROLE_ADMIN, &rec), SG_E_NOT_FOUND);
  assert_int_equal(sg_store_member_disable(f->st, other, v, &rec), SG_E_NOT_FOUND);
  json_decref(w);
  assert_int_equal(sg_store_member_disable(f->st, f->ws, v, &rec), SG_E_OK);
  assert_string_equal(json_string_value(json_object_get(rec, "status")), "disabled");
  json_decref(rec);
  /* A removed member's email can be invited again. */
  char again[64];
  member(f, f->ws, "v@example.com", SG_ROLE_VIEWER, again);
  assert_string_not_equal(again, v);
  json_t *list = NULL;
  assert_int_equal(sg_store_member_list(f->st, f->ws, &list), SG_E_OK);
  assert_int_equal(json_array_size(list), 3); /* o1, o2, the new v */
  json_decref(list);
}

static void test_sessions(void **state) {
  store_fixture *f = *state;
  char id[64];
  member(f, f->ws, "s@example.com", SG_ROLE_DATA_STEWARD, id);
  uint8_t d1[32], d2[32], d3[32];
  sg_random_bytes(d1, 32);
  sg_random_bytes(d2, 32);
  sg_random_bytes(d3, 32);
  int64_t t0 = 1000000;
  assert_int_equal(sg_store_session_create(f->st, d1, id, t0, 0), SG_E_OK);
  assert_int_equal(sg_store_session_create(f->st, d2, id, t0, 0), SG_E_OK);
  sg_member m;
  int64_t seen = 0;
  assert_int_equal(sg_store_session_lookup(f->st, d1, t0 + 500, 1000, &m, &seen), SG_E_OK);
  assert_string_equal(m.id, id);
  assert_int_equal(m.role, SG_ROLE_DATA_STEWARD);
  assert_int_equal(seen, t0);
  assert_int_equal(sg_store_session_lookup(f->st, d3, t0, 1000, &m, &seen), SG_E_NOT_FOUND);
  /* Sliding: a touch moves the window; an untouched session expires and is deleted. */
  assert_int_equal(sg_store_session_touch(f->st, d1, t0 + 900), SG_E_OK);
  assert_int_equal(sg_store_session_lookup(f->st, d1, t0 + 1800, 1000, &m, &seen), SG_E_OK);
  assert_int_equal(seen, t0 + 900);
  assert_int_equal(sg_store_session_lookup(f->st, d2, t0 + 1800, 1000, &m, &seen), SG_E_NOT_FOUND);
  assert_int_equal(sg_store_session_lookup(f->st, d2, t0, 1000, &m, &seen), SG_E_NOT_FOUND);
  /* A touch never moves the time backwards. */
  assert_int_equal(sg_store_session_touch(f->st, d1, t0), SG_E_OK);
  assert_int_equal(sg_store_session_lookup(f->st, d1, t0 + 1800, 1000, &m, &seen), SG_E_OK);
  assert_int_equal(seen, t0 + 900);
  /* A role change is seen by the next lookup. */
  json_t *rec = NULL;
  assert_int_equal(sg_store_member_set_role(f->st, f->ws, id, SG_ROLE_VIEWER, &rec), SG_E_OK);
  json_decref(rec);
  assert_int_equal(sg_store_session_lookup(f->st, d1, t0 + 1000, 1000, &m, &seen), SG_E_OK);
  assert_int_equal(m.role, SG_ROLE_VIEWER);
  /* Sign out one, then all. */
  assert_int_equal(sg_store_session_create(f->st, d2, id, t0, 0), SG_E_OK);
  assert_int_equal(sg_store_session_create(f->st, d3, id, t0, 0), SG_E_OK);
  assert_int_equal(sg_store_session_delete(f->st, d2), SG_E_OK);
  assert_int_equal(sg_store_session_lookup(f->st, d2, t0, 1000, &m, &seen), SG_E_NOT_FOUND);
  int64_t n = 0;
  assert_int_equal(sg_store_session_delete_all(f->st, id, &n), SG_E_OK);
  assert_int_equal(n, 2);
  assert_int_equal(sg_store_session_lookup(f->st, d1, t0 + 1000, 1000, &m, &seen), SG_E_NOT_FOUND);
  /* Password change keeps only the session that made it. */
  assert_int_equal(sg_store_session_create(f->st, d1, id, t0, 0), SG_E_OK);
  assert_int_equal(sg_store_session_create(f->st, d2, id, t0, 0), SG_E_OK);
  assert_int_equal(sg_store_member_set_password(f->st, id, "$argon2id$new", d1), SG_E_OK);
  assert_int_equal(sg_store_session_lookup(f->st, d1, t0, 1000, &m, &seen), SG_E_OK);
  assert_int_equal(sg_store_session_lookup(f->st, d2, t0, 1000, &m, &seen), SG_E_NOT_FOUND);
  /* A new session sweeps away the sessions idle since before its stale time. */
  uint8_t d4[32];
  sg_random_bytes(d4, 32);
  assert_int_equal(sg_store_session_create(f->st, d4, id, t0 + 5000, t0 + 1), SG_E_OK);
  assert_int_equal(sg_store_session_lookup(f->st, d1, t0, 1000000, &m, &seen), SG_E_NOT_FOUND);
  assert_int_equal(sg_store_session_lookup(f->st, d4, t0 + 5000, 1000, &m, &seen), SG_E_OK);
  assert_int_equal(sg_store_session_create(f->st, d1, id, t0, 0), SG_E_OK);
  /* Disabling a member ends its sessions. */
  assert_int_equal(sg_store_member_disable(f->st, NULL, id, &rec), SG_E_OK);
  json_decref(rec);
  assert_int_equal(sg_store_session_lookup(f->st, d1, t0, 1000, &m, &seen), SG_E_NOT_FOUND);
}

static void test_audit_pages(void **state) {
  store_fixture *f = *state;
  for (int i = 0; i < 5; i++) {
    char target[16];
    snprintf(target, sizeof target, "t%d", i);
    json_t *det = json_pack("{s:i}", "i", i);
    sg_audit_entry e = {.workspace_id = f->ws,
                        .actor = "mbr_x",
                        .actor_email = "x@example.com",
                        .action = "list.create",
                        .target = target,
                        .request_id = "req_1",
                        .status = 201,
                        .details = det};
    assert_int_equal(sg_store_audit_add(f->st, &e), SG_E_OK);
    json_decref(det);
  }
  sg_audit_entry other = {.workspace_id = "wsp_other", .actor = "cli", .action = "x.y"};
  assert_int_equal(sg_store_audit_add(f->st, &other), SG_E_OK);
  json_t *data = NULL;
  bool more = false;
  assert_int_equal(sg_store_audit_page(f->st, f->ws, 3, NULL, &data, &more), SG_E_OK);
  assert_true(more);
  assert_int_equal(json_array_size(data), 3);
  json_t *first = json_array_get(data, 0);
  assert_string_equal(json_string_value(json_object_get(first, "target")), "t4");
  assert_int_equal(json_integer_value(json_object_get(json_object_get(first, "details"), "i")), 4);
  json_t *after = json_pack("[O]", json_object_get(json_array_get(data, 2), "seq"));
  json_decref(data);
  assert_int_equal(sg_store_audit_page(f->st, f->ws, 3, after, &data, &more), SG_E_OK);
  assert_false(more);
  assert_int_equal(json_array_size(data), 2);
  assert_string_equal(json_string_value(json_object_get(json_array_get(data, 1), "target")), "t0");
  json_decref(data);
  json_decref(after);
}

/* The applications page: every application of the workspace once, in the unpaged list's
 * order, never another workspace's; a cursor naming a foreign application is empty. */
static void test_application_pages(void **state) {
  store_fixture *f = *state;
  json_t *ws2 = NULL, *rec = NULL;
  assert_int_equal(sg_store_workspace_create(f->st, "other", &ws2), SG_E_OK);
  const char *other = json_string_value(json_object_get(ws2, "id"));
  for (int i = 0; i < 5; i++) {
    char name[16];
    snprintf(name, sizeof name, "app %d", i);
    assert_int_equal(sg_store_application_create(f->st, f->ws, name, -1, &rec), SG_E_OK);
    json_decref(rec);
    assert_int_equal(sg_store_application_create(f->st, other, name, -1, &rec), SG_E_OK);
    json_decref(rec);
  }
  json_t *all = NULL;
  assert_int_equal(sg_store_application_list(f->st, f->ws, &all), SG_E_OK);
  size_t total = json_array_size(all), seen = 0;
  json_t *after = NULL;
  bool more = true;
  while (more) {
    json_t *page = NULL;
    assert_int_equal(sg_store_application_page(f->st, f->ws, 2, after, &page, &more), SG_E_OK);
    assert_true(json_array_size(page) <= 2);
    size_t i;
    json_t *a;
    json_array_foreach(page, i, a) {
      assert_string_equal(json_string_value(json_object_get(a, "id")),
                          json_string_value(json_object_get(json_array_get(all, seen), "id")));
      seen++;
    }
    json_decref(after);
    after =
        json_pack("[O]", json_object_get(json_array_get(page, json_array_size(page) - 1), "id"));
    json_decref(page);
  }
  json_decref(after);
  assert_int_equal(seen, total);
  assert_true(total >= 5);
  /* A cursor naming the other workspace's application gives nothing of it. */
  json_t *theirs = NULL, *page = NULL;
  assert_int_equal(sg_store_application_list(f->st, other, &theirs), SG_E_OK);
  after = json_pack("[O]", json_object_get(json_array_get(theirs, 0), "id"));
  assert_int_equal(sg_store_application_page(f->st, f->ws, 10, after, &page, &more), SG_E_OK);
  assert_int_equal(json_array_size(page), 0);
  assert_false(more);
  json_decref(page);
  json_decref(after);
  json_decref(theirs);
  json_decref(all);
  json_decref(ws2);
}

static void test_keys_listing_has_no_secrets(void **state) {
  store_fixture *f = *state;
  json_t *app = NULL;
  assert_int_equal(sg_store_application_create(f->st, f->ws, "web", -1, &app), SG_E_OK);
  const char *aid = json_string_value(json_object_get(app, "id"));
  uint8_t digest[32];
  sg_random_bytes(digest, 32);
  assert_int_equal(sg_store_secret_key_create(f->st, aid, "sk_test1", digest), SG_E_OK);
  json_t *keys = NULL;
  assert_int_equal(sg_store_secret_key_list(f->st, aid, &keys), SG_E_OK);
  assert_int_equal(json_array_size(keys), 1);
  json_t *k = json_array_get(keys, 0);
  assert_int_equal(json_object_size(k), 5);
  assert_string_equal(json_string_value(json_object_get(k, "id")), "sk_test1");
  assert_string_equal(json_string_value(json_object_get(k, "status")), "active");
  assert_true(json_is_string(json_object_get(k, "createdAt")));
  assert_true(json_is_null(json_object_get(k, "lastUsedAt")));
  assert_true(json_is_null(json_object_get(k, "revokedAt")));
  json_decref(keys);
  assert_int_equal(sg_store_secret_key_touch(f->st, "sk_test1", 1700000000), SG_E_OK);
  assert_int_equal(sg_store_secret_key_list(f->st, aid, &keys), SG_E_OK);
  assert_string_equal(json_string_value(json_object_get(json_array_get(keys, 0), "lastUsedAt")),
                      "2023-11-14T22:13:20Z");
  json_decref(keys);
  char ws[64];
  assert_int_equal(sg_store_secret_key_workspace(f->st, "sk_test1", ws), SG_E_OK);
  assert_string_equal(ws, f->ws);
  assert_int_equal(sg_store_secret_key_workspace(f->st, "sk_nope", ws), SG_E_NOT_FOUND);
  /* A publishable key: listed with its list and origins, and its workspace found. */
  char pdigest[65];
  memset(pdigest, 'c', 64);
  pdigest[64] = '\0';
  json_t *origins = json_pack("[s]", "https://a.example");
  json_t *pk = NULL;
  assert_int_equal(
      sg_store_publishable_key_create(f->st, "pk_test1", aid, f->list, pdigest, origins, &pk),
      SG_E_OK);
  json_decref(pk);
  assert_int_equal(sg_store_publishable_key_list(f->st, aid, &keys), SG_E_OK);
  assert_int_equal(json_array_size(keys), 1);
  k = json_array_get(keys, 0);
  assert_string_equal(json_string_value(json_object_get(k, "id")), "pk_test1");
  assert_string_equal(json_string_value(json_object_get(k, "listId")), f->list);
  assert_true(json_equal(json_object_get(k, "origins"), origins));
  assert_string_equal(json_string_value(json_object_get(k, "status")), "active");
  assert_true(json_is_string(json_object_get(k, "createdAt")));
  json_decref(keys);
  json_decref(origins);
  memset(ws, 0, sizeof ws);
  assert_int_equal(sg_store_publishable_key_workspace(f->st, "pk_test1", ws), SG_E_OK);
  assert_string_equal(ws, f->ws);
  assert_int_equal(sg_store_publishable_key_workspace(f->st, "pk_nope", ws), SG_E_NOT_FOUND);
  /* `admin … list`: each field from its own column. */
  json_t *rows = NULL;
  assert_int_equal(sg_store_admin_list(f->st, "applications", NULL, NULL, f->ws, &rows), SG_E_OK);
  assert_int_equal(json_array_size(rows), 1);
  k = json_array_get(rows, 0);
  assert_string_equal(json_string_value(json_object_get(k, "id")), aid);
  assert_string_equal(json_string_value(json_object_get(k, "workspaceId")), f->ws);
  assert_string_equal(json_string_value(json_object_get(k, "name")), "web");
  assert_string_equal(json_string_value(json_object_get(k, "status")), "active");
  assert_true(json_is_string(json_object_get(k, "createdAt")));
  json_decref(rows);
  assert_int_equal(sg_store_admin_list(f->st, "secret-keys", aid, NULL, NULL, &rows), SG_E_OK);
  assert_int_equal(json_array_size(rows), 1);
  k = json_array_get(rows, 0);
  assert_string_equal(json_string_value(json_object_get(k, "id")), "sk_test1");
  assert_string_equal(json_string_value(json_object_get(k, "applicationId")), aid);
  assert_string_equal(json_string_value(json_object_get(k, "workspaceId")), f->ws);
  assert_string_equal(json_string_value(json_object_get(k, "status")), "active");
  assert_true(json_is_string(json_object_get(k, "createdAt")));
  assert_true(json_is_null(json_object_get(k, "revokedAt")));
  json_decref(rows);
  assert_int_equal(sg_store_admin_list(f->st, "publishable-keys", NULL, f->list, NULL, &rows),
                   SG_E_OK);
  assert_int_equal(json_array_size(rows), 1);
  k = json_array_get(rows, 0);
  assert_string_equal(json_string_value(json_object_get(k, "id")), "pk_test1");
  assert_string_equal(json_string_value(json_object_get(k, "applicationId")), aid);
  assert_string_equal(json_string_value(json_object_get(k, "workspaceId")), f->ws);
  assert_string_equal(json_string_value(json_object_get(k, "listId")), f->list);
  assert_int_equal(json_array_size(json_object_get(k, "origins")), 1);
  assert_string_equal(json_string_value(json_object_get(k, "status")), "active");
  json_decref(rows);
  assert_int_equal(sg_store_admin_list(f->st, "workspaces", NULL, NULL, NULL, &rows), SG_E_OK);
  assert_int_equal(json_array_size(rows), 1);
  k = json_array_get(rows, 0);
  assert_string_equal(json_string_value(json_object_get(k, "id")), f->ws);
  assert_string_equal(json_string_value(json_object_get(k, "name")), "W");
  assert_string_equal(json_string_value(json_object_get(k, "status")), "active");
  json_decref(rows);
  assert_int_equal(sg_store_application_in_workspace(f->st, f->ws, aid), SG_E_OK);
  assert_int_equal(sg_store_application_in_workspace(f->st, "wsp_other", aid), SG_E_NOT_FOUND);
  json_decref(app);
}

int main(void) {
  if (sg_init()) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roles),
      cmocka_unit_test_setup_teardown(test_member_create_and_signin_lookup, store_fixture_setup,
                                      store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_email_unique_per_workspace, store_fixture_setup,
                                      store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_last_owner_stays, store_fixture_setup,
                                      store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_sessions, store_fixture_setup, store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_audit_pages, store_fixture_setup,
                                      store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_application_pages, store_fixture_setup,
                                      store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_keys_listing_has_no_secrets, store_fixture_setup,
                                      store_fixture_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
