/*
 * One error table for the whole service.
 *
 * Each row is {enum name, HTTP status, wire code, details.reason or NULL, message}.
 * The enum, the JSON error bodies of both APIs and the tests all come from this
 * table, so a new error is one line here.
 */
#ifndef SG_COMMON_ERROR_H
#define SG_COMMON_ERROR_H

#define SG_ERRORS(X)                                                                               \
  X(OK, 200, "ok", NULL, "OK")                                                                     \
  X(INVALID_KEY, 401, "invalid_key", NULL, "The key is missing, wrong or revoked.")                \
  X(INVALID_TOKEN, 401, "invalid_token", NULL, "The access token is missing or invalid.")          \
  X(INVALID_LIST, 404, "invalid_list", NULL, "The list does not exist or is not yours.")           \
  X(INVALID_REQUEST, 400, "invalid_request", NULL, "The request is malformed.")                    \
  X(NOT_FOUND, 404, "not_found", NULL, "No such route.")                                           \
  X(METHOD_NOT_ALLOWED, 405, "method_not_allowed", NULL,                                           \
    "The route exists but does not take this method.")                                             \
  X(PAYLOAD_TOO_LARGE, 413, "invalid_request", "payload_too_large",                                \
    "The request body is larger than this route accepts.")                                         \
  X(HEADERS_TOO_LARGE, 431, "invalid_request", "headers_too_large",                                \
    "The request line and headers are larger than the server accepts.")                            \
  X(PRECONDITION_FAILED, 412, "invalid_request", "precondition_failed",                            \
    "If-Match does not match the current ETag.")                                                   \
  X(IDEMPOTENCY_KEY_REUSED, 422, "invalid_request", "idempotency_key_reused",                      \
    "This Idempotency-Key was used with a different request.")                                     \
  X(IDEMPOTENCY_KEY_IN_FLIGHT, 409, "invalid_request", "idempotency_key_in_flight",                \
    "A request with this Idempotency-Key is still running; retry after one second.")               \
  X(DUPLICATE_VALUE, 409, "invalid_request", "duplicate_value",                                    \
    "An item with this value already exists in the list.")                                         \
  X(INVALID_ITEM, 404, "invalid_item", NULL, "The item does not exist in this list.")              \
  X(ITEM_HAS_CHILDREN, 409, "invalid_request", "item_has_children",                                \
    "Other items name this item as their parent; change or delete them first.")                    \
  X(UNSUPPORTED_MEDIA_TYPE, 415, "invalid_request", "unsupported_media_type",                      \
    "This route takes another Content-Type.")                                                      \
  X(LIST_ARCHIVED, 409, "invalid_request", "list_archived",                                        \
    "The list is archived and accepts no changes.")                                                \
  X(PUBLISH_IN_PROGRESS, 409, "invalid_request", "publish_in_progress",                            \
    "A publish of this list is already running; retry shortly.")                                   \
  X(VERSION_NOT_AVAILABLE, 409, "invalid_request", "version_not_available",                        \
    "This version's compiled artifact is no longer kept (--keep-versions); publish again.")        \
  X(VERSION_NOT_ACTIVATABLE, 409, "invalid_request", "version_not_activatable",                    \
    "Only a version that was published (active or superseded) can be activated.")                  \
  X(RATE_LIMITED, 429, "rate_limited", NULL, "Too many requests; retry later.")                    \
  X(TOKEN_MINTING_UNAVAILABLE, 503, "internal_error", "token_minting_unavailable",                 \
    "Token minting is not configured; retry later.")                                               \
  X(INTERNAL, 500, "internal_error", NULL, "An internal error occurred.")                          \
  X(UNAVAILABLE, 503, "internal_error", "unavailable", "The service is unavailable.")              \
  X(ARTIFACT_WRITE_FAILED, 503, "internal_error", "artifact_write_failed",                         \
    "The compiled list could not be stored (the edge store or the database did not take it); "     \
    "this version failed and nothing served changed.")                                             \
  X(BUSY, 503, "internal_error", "server_busy",                                                    \
    "The server has as much of this work queued as it takes; retry after Retry-After seconds.")    \
  X(ORIGIN_NOT_ALLOWED, 403, "origin_not_allowed", NULL,                                           \
    "The Origin is not on the key's allow-list.")                                                  \
  X(QUERY_TOO_SHORT, 200, "query_too_short", NULL, "The query is shorter than allowed.")           \
  X(QUERY_TOO_LONG, 400, "query_too_long", NULL, "The query is longer than allowed.")              \
  X(QUOTA_EXCEEDED, 200, "quota_exceeded", NULL, "The query quota is exhausted.")                  \
  X(LIST_NOT_PUBLISHED, 404, "list_not_published", NULL, "The list is not published.")             \
  X(ARTIFACT_UNAVAILABLE, 503, "artifact_unavailable", NULL,                                       \
    "Compiled data could not be served; retry shortly.")                                           \
  X(INVALID_SESSION, 401, "invalid_session", NULL,                                                 \
    "Sign in first: the dashboard session is missing, expired or revoked.")                        \
  X(INVALID_CREDENTIALS, 401, "invalid_credentials", NULL, "The email or password is wrong.")      \
  X(INSUFFICIENT_ROLE, 403, "forbidden", "insufficient_role",                                      \
    "Your role in this workspace does not allow this action.")                                     \
  X(CSRF_TOKEN_INVALID, 403, "forbidden", "csrf_token_invalid",                                    \
    "The X-CSRF-Token header is missing or does not belong to this session.")                      \
  X(CROSS_ORIGIN, 403, "forbidden", "cross_origin",                                                \
    "The dashboard API refuses requests from another site.")                                       \
  X(LAST_OWNER, 409, "invalid_request", "last_owner",                                              \
    "The workspace must keep at least one active owner.")                                          \
  X(MEMBER_EXISTS, 409, "invalid_request", "member_exists",                                        \
    "A member with this email already exists in this workspace.")                                  \
  X(EMAIL_MEMBERSHIP_LIMIT, 409, "invalid_request", "email_membership_limit_reached",              \
    "This email cannot join another workspace: an email may belong to at most 20.")                \
  X(WORKSPACE_REQUIRED, 409, "invalid_request", "workspace_required",                              \
    "This email and password open several workspaces: choose one (workspaceId).")                  \
  X(LIST_LIMIT, 409, "invalid_request", "list_limit_reached",                                      \
    "The workspace holds as many lists as it may (--max-lists-per-workspace).")                    \
  X(MEMBER_LIMIT, 409, "invalid_request", "member_limit_reached",                                  \
    "The workspace has as many active members as it may (--max-members-per-workspace).")           \
  X(PUBLISHABLE_KEY_LIMIT, 409, "invalid_request", "publishable_key_limit_reached",                \
    "The application has as many active publishable keys as it may "                               \
    "(--max-publishable-keys-per-application).")                                                   \
  X(SECRET_KEY_LIMIT, 409, "invalid_request", "secret_key_limit_reached",                          \
    "The application has as many active secret keys as it may "                                    \
    "(--max-secret-keys-per-application).")                                                        \
  X(NO_QUALIFYING_QUERIES, 409, "invalid_request", "no_qualifying_queries",                        \
    "No query of the source list has enough selections in the period; nothing changed.")

typedef enum {
#define SG__ERR_ENUM(name, status, code, reason, msg) SG_E_##name,
  SG_ERRORS(SG__ERR_ENUM)
#undef SG__ERR_ENUM
      SG_E__COUNT
} sg_err;

/* Table lookups; every sg_err has a row, so these never return NULL except reason. */
int sg_err_status(sg_err e);
const char *sg_err_code(sg_err e);
const char *sg_err_reason(sg_err e); /* NULL when the row has none */
const char *sg_err_message(sg_err e);
const char *sg_err_name(sg_err e);

#endif
