#include "common/error.h"

#include <stddef.h>

typedef struct {
  const char *name;
  int status;
  const char *code;
  const char *reason;
  const char *message;
} sg__err_row;

static const sg__err_row rows[] = {
#define SG__ERR_ROW(name, status, code, reason, msg) {#name, status, code, reason, msg},
    SG_ERRORS(SG__ERR_ROW)
#undef SG__ERR_ROW
};

static const sg__err_row *row(sg_err e) {
  if ((int)e < 0 || e >= SG_E__COUNT) e = SG_E_INTERNAL;
  return &rows[e];
}

int sg_err_status(sg_err e) { return row(e)->status; }
const char *sg_err_code(sg_err e) { return row(e)->code; }
const char *sg_err_reason(sg_err e) { return row(e)->reason; }
const char *sg_err_message(sg_err e) { return row(e)->message; }
const char *sg_err_name(sg_err e) { return row(e)->name; }
