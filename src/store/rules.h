/*
 * Store rules that do not depend on the engine, shared by every backend (above the seam).
 */
#ifndef SG_STORE_RULES_H
#define SG_STORE_RULES_H

#include <stdbool.h>
#include <stddef.h>

/* The base slug of a list name: ASCII letters and digits lower-cased (after the search
 * normalisation folds case and strips marks), every other run becomes '-', at most 60
 * characters; "list" when nothing is left. outsz >= 61. */
void sg__store_slug_base(const char *name, char *out, size_t outsz);
/* The attempt-th candidate slug for base (attempt 1: base itself, then base-2, … up to
 * attempt 100; past that base-<8 random hex>) into out (outsz >= 80). A backend tries
 * them in order until one is free in the workspace. */
#define SG_STORE_SLUG_ATTEMPTS 120
void sg__store_slug_candidate(const char *base, int attempt, char *out, size_t outsz);

/* The shared-list rule: workspace_id may use a list (name it in a publishable key or an
 * access token) when it owns the list (owner_workspace_id), or when the list's visibility
 * is "shared" and workspace_id holds an active subscription to it (subscribed). */
bool sg__store_list_usable(const char *workspace_id, const char *owner_workspace_id,
                           const char *visibility, bool subscribed);
/* A workspace may subscribe to a list that is "shared" and not its own. */
bool sg__store_list_subscribable(const char *workspace_id, const char *owner_workspace_id,
                                 const char *visibility);

#endif
