/*
 * Writes an artifact and records into an edge store (a directory or a Redis URL) the way
 * the control plane does, for bench/load.sh: the cold-runtime figure is the runtime's
 * alone, without a control plane or an import in front of it.
 *
 *   edge_put EDGE artifact FILE           prints sha256:<hex>
 *   edge_put EDGE record KIND ID JSON     KIND: lists keys apps workspaces
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "edge/edge.h"

int main(int argc, char **argv) {
  if (sg_init() || argc < 4) {
    fprintf(stderr, "usage: edge_put EDGE artifact FILE | record KIND ID JSON\n");
    return 2;
  }
  sg_edge *e;
  if (sg_edge_open(argv[1], &e)) return 1;
  int rc = 1;
  if (strcmp(argv[2], "artifact") == 0) {
    char *data = NULL, hash[72];
    size_t len = 0;
    if (sg_read_file(argv[3], (size_t)4 << 30, &data, &len) == 0) {
      sg_sha256_tagged(data, len, hash);
      if (sg_edge_put_artifact(e, hash, data, len) == 0) rc = printf("%s\n", hash) < 0;
    }
    free(data);
  } else if (strcmp(argv[2], "record") == 0 && argc == 6) {
    const char *kinds[] = {"lists", "keys", "apps", "workspaces"};
    for (int k = 0; k < 4; k++)
      if (strcmp(argv[3], kinds[k]) == 0)
        rc = sg_edge_put(e, (sg_edge_kind)k, argv[4], argv[5], strlen(argv[5]), NULL) != 0;
  }
  sg_edge_close(e);
  return rc;
}
