/*
 * Command-line flags for every subcommand.
 *
 * Flags may come before or after positional arguments ("--data-dir D" or
 * "--data-dir=D"). Every flag is mirrored by an environment variable SUGGESTD_<NAME>
 * (upper case, '-' -> '_'), which applies when the flag is absent. Repeatable flags
 * (e.g. --origin) collect every occurrence.
 */
#ifndef SG_COMMON_ARGS_H
#define SG_COMMON_ARGS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
  const char *name; /* without the leading "--" */
  bool takes_value;
  bool repeatable;
} sg_flag_spec;

#define SG_ARGS_MAX 64

typedef struct {
  const sg_flag_spec *specs;
  const char *names[SG_ARGS_MAX];  /* flag name of each occurrence */
  const char *values[SG_ARGS_MAX]; /* its value ("1" for a boolean flag) */
  size_t n;
  const char *pos[SG_ARGS_MAX]; /* positional arguments in order */
  size_t npos;
  char env_scratch[128];
} sg_args;

/* Parses argv[0..argc) (the words after the subcommand). Returns 0, or -1 with a
 * message in err (unknown flag, missing value, repeated non-repeatable flag). */
int sg_args_parse(sg_args *a, int argc, char **argv, const sg_flag_spec *specs, char *err,
                  size_t errsz);

/* The flag's value, else SUGGESTD_<NAME> from the environment, else NULL. */
const char *sg_args_get(sg_args *a, const char *name);
/* Like sg_args_get with a default. */
const char *sg_args_get_or(sg_args *a, const char *name, const char *dflt);
bool sg_args_has(sg_args *a, const char *name);
/* Occurrences of a repeatable flag. */
size_t sg_args_count(const sg_args *a, const char *name);
const char *sg_args_nth(const sg_args *a, const char *name, size_t i);

#endif
