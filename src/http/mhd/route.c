/*
 * Route tables (route.h): the control plane's router and the dashboard's both match
 * requests through these, and neither is called from here.
 */
#include "http/mhd/route.h"

#include <string.h>

/* Matches path against pattern, capturing parameters into req->params (pointers into
 * scratch, a copy of the path whose parameter ends are cut with NULs after a match). */
bool sg__route_match(const char *pattern, const char *path, char *scratch, size_t scratchsz,
                     sg_req *req) {
  size_t pl = strlen(path);
  if (pl >= scratchsz) return false;
  memcpy(scratch, path, pl + 1);
  req->nparams = 0;
  const char *p = pattern;
  char *s = scratch;
  while (*p || *s) {
    if (*p != '/' || *s != '/') return false;
    p++;
    s++;
    size_t plen = strcspn(p, "/"), slen = strcspn(s, "/");
    if (plen == 2 && p[0] == '{' && p[1] == '}') {
      if (slen == 0 || req->nparams >= SG_HTTP_MAX_PARAMS) return false;
      req->params[req->nparams++] = s;
    } else if (plen != slen || memcmp(p, s, plen) != 0) {
      return false;
    }
    p += plen;
    s += slen;
  }
  for (size_t i = 0; i < req->nparams; i++) req->params[i][strcspn(req->params[i], "/")] = '\0';
  return true;
}

const void *sg__route_find(sg_req *req, sg_resp *resp, const void *table, size_t stride) {
  const void *found = NULL;
  bool path_known = false;
  char allow[64] = "";
  for (const char *row = table;; row += stride) {
    const char *method, *pattern;
    memcpy(&method, row, sizeof method);
    memcpy(&pattern, row + sizeof method, sizeof pattern);
    if (!method) break;
    if (!sg__route_match(pattern, req->path, req->scratch, sizeof req->scratch, req)) continue;
    if (!path_known) req->route = pattern; /* a 405 is counted on the path's route */
    path_known = true;
    if (!strstr(allow, method) && strlen(allow) + strlen(method) + 3 < sizeof allow) {
      if (*allow) strcat(allow, ", ");
      strcat(allow, method);
    }
    if (strcmp(method, req->method) == 0) {
      found = row;
      /* Match again so params point into the scratch of this route. */
      sg__route_match(pattern, req->path, req->scratch, sizeof req->scratch, req);
      req->route = pattern;
      break;
    }
  }
  if (!found) {
    if (path_known) {
      sg_resp_header(resp, "Allow", allow);
      sg_resp_error(resp, req, SG_E_METHOD_NOT_ALLOWED, NULL, NULL);
    } else {
      sg_resp_error(resp, req, SG_E_NOT_FOUND, NULL, NULL);
    }
  }
  return found;
}
