/*
 * Text normalisation of DESIGN.md section 3, shared by the compiler and the runtime:
 * NFKC, full case folding, strip marks (Mn, Mc, Me), recompose, then every run of code
 * points that are not letters or numbers (L*, N*) becomes one space, and the ends are
 * trimmed.  "Sant Julià de Lòria" -> "sant julia de loria".
 */
#ifndef SG_COMPILER_NORMALIZE_H
#define SG_COMPILER_NORMALIZE_H

#include <stddef.h>

/* Normalises in[0..len). On success returns 0 and sets *out to a malloc'd NUL-terminated
 * string (caller frees) and *outlen to its length. Returns -1 on invalid UTF-8 or OOM.
 * (The runtime hot path uses sg_normalize_into instead, which does not allocate.) */
int sg_normalize(const char *in, size_t len, char **out, size_t *outlen);

/* Same, into a caller buffer out[0..cap). Returns the normalised length, or -1 on
 * invalid UTF-8, or -2 when cap is too small. Never allocates for inputs whose
 * normalised form fits SG_NORMALIZE_STACK_CP code points of scratch. */
#define SG_NORMALIZE_STACK_CP 1024
long sg_normalize_into(const char *in, size_t len, char *out, size_t cap);

#endif
