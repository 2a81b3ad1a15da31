/*
 * Text normalisation of docs/DESIGN.md §3, shared by the compiler and the runtime:
 * NFKC, full case folding, strip marks (Mn, Mc, Me), recompose, then every run of code
 * points that are not letters or numbers (L*, N*) becomes one space, and the ends are
 * trimmed.  "Sant Julià de Lòria" -> "sant julia de loria".
 */
#ifndef SG_COMPILER_NORMALIZE_H
#define SG_COMPILER_NORMALIZE_H

#include <stddef.h>
#include <stdint.h>

/* Normalises in[0..len). On success returns 0 and sets *out to a malloc'd NUL-terminated
 * string (caller frees) and *outlen to its length. Returns -1 on invalid UTF-8 or OOM.
 * (The runtime hot path uses sg_normalize_into instead, which does not allocate.) */
int sg_normalize(const char *in, size_t len, char **out, size_t *outlen);

/* Same, into a caller buffer out[0..cap). Returns the normalised length, or -1 on
 * invalid UTF-8, or -2 when cap is too small. Never allocates for inputs whose
 * normalised form fits SG_NORMALIZE_STACK_CP code points of scratch. */
#define SG_NORMALIZE_STACK_CP 1024
long sg_normalize_into(const char *in, size_t len, char *out, size_t cap);

/* Same as sg_normalize_into, and also the offset map of docs/DESIGN.md §3.2: for each
 * normalised code point k (*ncp of them), map[2k] and map[2k+1] are the [start, end)
 * UTF-16 code-unit offsets of the input characters whose normalisation formed it. A
 * character that normalises to nothing (a stripped mark) belongs to the code point before
 * it; a space stands for the whole run of non-letters it replaced; code points that NFKC
 * composes from several characters cover all of them. map holds map_cp pairs; returns -2
 * when out or map is too small. Allocates only past SG_NORMALIZE_STACK_CP code points. */
long sg_normalize_map(const char *in, size_t len, char *out, size_t cap, uint32_t *map,
                      size_t map_cp, size_t *ncp);

#endif
