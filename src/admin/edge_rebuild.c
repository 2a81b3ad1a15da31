/*
 * `suggestd admin edge rebuild`: rewrites the whole edge store from the relational store
 * in a new guard epoch (control/edge_guard.h; docs/EDGE.md, "The staleness guard"), so
 * every runtime reloads it whole, and prints the summary.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "control/edge_guard.h"

int sg__admin_edge_rebuild(sg_store *st, sg_edge *e) {
  sg_edge_guard_proc p = {0};
  json_t *report = NULL;
  int rc = sg_edge_guard_rewrite(st, e, &p, &report);
  if (rc < 0 || !report) {
    json_decref(report);
    sg__cli_fail("cannot rewrite the edge: the store or the edge could not be read", NULL);
    return 1;
  }
  json_t *records = json_object_get(report, "records");
  json_t *arts = json_object_get(report, "artifacts");
  json_t *missing = json_object_get(arts, "missing");
  json_int_t failed = json_integer_value(json_object_get(records, "failed"));
  if (rc != 0 || failed || json_array_size(missing)) {
    char msg[1024];
    char *miss = json_dumps(missing, JSON_COMPACT);
    snprintf(msg, sizeof msg,
             "edge rebuild incomplete: %lld record writes failed (retried by a running control "
             "plane); %zu of %lld artifacts the store names are not on the edge: %.700s",
             (long long)failed, json_array_size(missing),
             (long long)json_integer_value(json_object_get(arts, "needed")), miss ? miss : "");
    free(miss);
    json_decref(report);
    sg__cli_fail("%s", msg);
    return 1;
  }
  /* The summary as before: records {written, removed}, artifacts without the empty
   * missing list, the revision and now the epoch. */
  json_object_del(records, "failed");
  json_object_del(arts, "missing");
  char *s = json_dumps(report, JSON_COMPACT);
  json_decref(report);
  if (!s) {
    sg__cli_fail("out of memory", NULL);
    return 1;
  }
  printf("%s\n", s);
  free(s);
  return 0;
}
