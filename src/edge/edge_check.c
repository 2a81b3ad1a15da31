/*
 * sg_edge_check: the edge store's readiness probe.
 *
 * A missing REVISION file reads as revision 0 (a fresh store), so reading the revision
 * alone would call a directory that was moved away healthy; the folders are checked too.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "edge/edge_internal.h"

static int usable_dir(const char *path) {
  struct stat sb;
  if (stat(path, &sb)) return -1;
  if (!S_ISDIR(sb.st_mode)) {
    errno = ENOTDIR;
    return -1;
  }
  return access(path, R_OK | W_OK | X_OK);
}

int sg_edge_check(sg_edge *e) {
  if (!e) {
    errno = EINVAL;
    return -1;
  }
  if (e->dir) {
    if (usable_dir(e->dir)) return -1;
    char p[PATH_MAX];
    for (int k = 0; k <= SG_EDGE__KINDS; k++) {
      const char *sub = k < SG_EDGE__KINDS ? sg_edge_kind_name((sg_edge_kind)k) : "artifacts";
      if (snprintf(p, sizeof p, "%s/%s", e->dir, sub) >= (int)sizeof p) {
        errno = ENAMETOOLONG;
        return -1;
      }
      if (usable_dir(p)) return -1;
    }
  }
  uint64_t rev;
  return sg_edge_revision(e, &rev);
}
