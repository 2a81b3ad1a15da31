/*
 * GET /api/v1/lists/{id}/items/export — every current item as NDJSON, ordered by
 * displayOrder then id; each line is the item as GET …/items shows it plus parentValue, so
 * the file imports back unchanged (POST …/items/import?mode=replace answers all
 * "unchanged"). The body is produced on demand from one read transaction of its own
 * connection (sg_store_export_*): memory stays at one line plus the output window,
 * whatever the list's size, and the export is an exact snapshot.
 */
#include <stdlib.h>
#include <string.h>

#include "control/internal.h"

/* The producer's state: the cursor and the current line not yet fully sent. */
typedef struct {
  sg_store_export *cur;
  char *line; /* malloc'd, with its '\n' */
  size_t len, off;
  bool done;
} export_ctx;

static long export_read(void *ctx, char *buf, size_t max) {
  export_ctx *x = ctx;
  size_t n = 0;
  while (n < max) {
    if (x->off == x->len) {
      free(x->line);
      x->line = NULL;
      x->len = x->off = 0;
      if (x->done) break;
      json_t *item = NULL;
      if (sg_store_export_next(x->cur, &item) != SG_E_OK) return -1;
      if (!item) {
        x->done = true;
        break;
      }
      char *s = json_dumps(item, JSON_COMPACT);
      json_decref(item);
      if (!s) return -1;
      x->len = strlen(s);
      x->line = realloc(s, x->len + 1);
      if (!x->line) {
        free(s);
        return -1;
      }
      x->line[x->len++] = '\n';
    }
    size_t k = x->len - x->off < max - n ? x->len - x->off : max - n;
    memcpy(buf + n, x->line + x->off, k);
    x->off += k;
    n += k;
  }
  return (long)n;
}

static void export_free(void *ctx) {
  export_ctx *x = ctx;
  sg_store_export_close(x->cur);
  free(x->line);
  free(x);
}

void sg__h_items_export(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp) {
  export_ctx *x = calloc(1, sizeof *x);
  if (!x) {
    sg_resp_error(resp, req, SG_E_INTERNAL, NULL, NULL);
    return;
  }
  sg_err e = sg_store_export_open(c->cfg.store, who->workspace_id, req->params[0], &x->cur);
  if (e != SG_E_OK) {
    free(x);
    sg__store_error(req, resp, e);
    return;
  }
  resp->status = 200;
  resp->content_type = "application/x-ndjson";
  resp->stream = (sg_resp_stream){export_read, export_free, x};
}
