#include "common/args.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const sg_flag_spec *find_spec(const sg_flag_spec *specs, const char *name, size_t len) {
  for (const sg_flag_spec *s = specs; s && s->name; s++)
    if (strlen(s->name) == len && memcmp(s->name, name, len) == 0) return s;
  return NULL;
}

int sg_args_parse(sg_args *a, int argc, char **argv, const sg_flag_spec *specs, char *err,
                  size_t errsz) {
  memset(a, 0, sizeof *a);
  a->specs = specs;
  bool only_pos = false;
  for (int i = 0; i < argc; i++) {
    const char *w = argv[i];
    if (only_pos || strncmp(w, "--", 2) != 0 || w[2] == '\0') {
      if (!only_pos && strcmp(w, "--") == 0) {
        only_pos = true;
        continue;
      }
      if (a->npos >= SG_ARGS_MAX) {
        snprintf(err, errsz, "too many arguments");
        return -1;
      }
      a->pos[a->npos++] = w;
      continue;
    }
    const char *name = w + 2;
    const char *eq = strchr(name, '=');
    size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
    const sg_flag_spec *s = find_spec(specs, name, nlen);
    if (!s) {
      snprintf(err, errsz, "unknown flag --%.*s", (int)nlen, name);
      return -1;
    }
    const char *val = "1";
    if (s->takes_value) {
      if (eq)
        val = eq + 1;
      else if (i + 1 < argc)
        val = argv[++i];
      else {
        snprintf(err, errsz, "flag --%s needs a value", s->name);
        return -1;
      }
    } else if (eq) {
      snprintf(err, errsz, "flag --%s takes no value", s->name);
      return -1;
    }
    if (!s->repeatable)
      for (size_t k = 0; k < a->n; k++)
        if (strcmp(a->names[k], s->name) == 0) {
          snprintf(err, errsz, "flag --%s given twice", s->name);
          return -1;
        }
    if (a->n >= SG_ARGS_MAX) {
      snprintf(err, errsz, "too many flags");
      return -1;
    }
    a->names[a->n] = s->name;
    a->values[a->n] = val;
    a->n++;
  }
  return 0;
}

const char *sg_args_get(sg_args *a, const char *name) {
  for (size_t k = a->n; k-- > 0;)
    if (strcmp(a->names[k], name) == 0) return a->values[k];
  size_t n = strlen(name);
  if (n + 9 >= sizeof a->env_scratch) return NULL;
  memcpy(a->env_scratch, "SUGGESTD_", 9);
  for (size_t i = 0; i < n; i++)
    a->env_scratch[9 + i] = name[i] == '-' ? '_' : (char)toupper((unsigned char)name[i]);
  a->env_scratch[9 + n] = '\0';
  const char *v = getenv(a->env_scratch);
  return (v && *v) ? v : NULL;
}

const char *sg_args_get_or(sg_args *a, const char *name, const char *dflt) {
  const char *v = sg_args_get(a, name);
  return v ? v : dflt;
}

bool sg_args_has(sg_args *a, const char *name) { return sg_args_get(a, name) != NULL; }

size_t sg_args_count(const sg_args *a, const char *name) {
  size_t c = 0;
  for (size_t k = 0; k < a->n; k++)
    if (strcmp(a->names[k], name) == 0) c++;
  return c;
}

const char *sg_args_nth(const sg_args *a, const char *name, size_t i) {
  for (size_t k = 0; k < a->n; k++)
    if (strcmp(a->names[k], name) == 0 && i-- == 0) return a->values[k];
  return NULL;
}
