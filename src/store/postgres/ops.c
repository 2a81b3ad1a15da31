/*
 * The PostgreSQL backend's table of operations (see store/store_internal.h). An
 * operation not yet written is left NULL: store.c answers SG_E_INTERNAL for it and logs
 * its name (docs/STORE.md lists what the backend covers).
 */
#include "store/postgres/pg.h"

const sg_store_ops sg__pg_store_ops = {
    .name = "postgres",
    .close = sg__pg_close,
    .workspace_create = sg__pg_workspace_create,
    .workspace_set_status = sg__pg_workspace_set_status,
    .application_create = sg__pg_application_create,
    .application_set_status = sg__pg_application_set_status,
    .application_set_quota = sg__pg_application_set_quota,
    .secret_key_create = sg__pg_secret_key_create,
    .secret_key_revoke = sg__pg_secret_key_revoke,
    .authenticate = sg__pg_authenticate,
    .application_get = sg__pg_application_get,
    .workspace_get = sg__pg_workspace_get,
    .publishable_key_create = sg__pg_publishable_key_create,
    .publishable_key_revoke = sg__pg_publishable_key_revoke,
    .subscription_create = sg__pg_subscription_create,
    .subscription_cancel = sg__pg_subscription_cancel,
    .lists_mintable = sg__pg_lists_mintable,
    .signing_key_add = sg__pg_signing_key_add,
    .signing_key_current = sg__pg_signing_key_current,
    .signing_keys_public = sg__pg_signing_keys_public,
    .list_create = sg__pg_list_create,
    .list_get = sg__pg_list_get,
    .list_page = sg__pg_list_page,
    .list_patch = sg__pg_list_patch,
    .item_create = sg__pg_item_create,
    .item_page = sg__pg_item_page,
    .item_get = sg__pg_item_get,
    .item_update = sg__pg_item_update,
    .item_delete = sg__pg_item_delete,
    .items_prune = sg__pg_items_prune,
    .item_search = sg__pg_item_search,
    .checkpoint = sg__pg_checkpoint,
    .secret = sg__pg_secret,
};
