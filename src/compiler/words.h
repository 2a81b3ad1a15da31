/*
 * Tiers 3 and 4 of docs/DESIGN.md §3.3 on one normalised candidate text: words in any
 * order and words run together. Shared by the artifact's search (src/search/words.c),
 * which verifies items with them, and the highlight (typo.c). Normalised text holds
 * letters, numbers and single spaces, no NUL; words are the runs between spaces.
 */
#ifndef SG_COMPILER_WORDS_H
#define SG_COMPILER_WORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Tier 3 applies to queries of 2 to 6 words; tier 4 to queries of at least 4 code points
 * once their spaces are removed. */
#define SG_T3_MIN_WORDS 2
#define SG_T3_MAX_WORDS 6
#define SG_T4_MIN_CP 4

typedef struct {
  const char *w[SG_T3_MAX_WORDS];
  size_t len[SG_T3_MAX_WORDS];
  size_t m; /* words; 0 when the query has fewer than 2 or more than 6 */
} sg__qwords;

/* Splits the normalised query nq[0..len) into its words for tier 3 (q->m = 0 when tier
 * 3 does not apply to it). The words point into nq. */
void sg__qwords_parse(const char *nq, size_t len, sg__qwords *q);

/* Tier 3: whether q's words take distinct word positions of c[0..clen) with w1 .. w(m-1)
 * equal to their word and wm a prefix of its word. q->m >= 2. */
bool sg__t3_match(const char *c, size_t clen, const sg__qwords *q);

/* Tier 3's highlight assignment: the lexicographically smallest word positions
 * (w1 .. wm) as above. Fills start_cp[i] (the code-point offset of wi's word in c) and
 * len_cp[i] (code points matched: the whole word, wm's own length for wm). Returns
 * false when c does not match or has more than max_words words. */
bool sg__t3_assign(const char *c, size_t clen, const sg__qwords *q, size_t start_cp[],
                   size_t len_cp[]);

/* Whether tier 4 applies to nq[0..len): at least SG_T4_MIN_CP code points without its
 * spaces. */
bool sg__t4_applies(const char *nq, size_t len);

/* Tier 4: whether nq[0..len) with its spaces removed is a prefix of NUL-terminated c
 * with its spaces removed (bytes). When it is and end_cp is not NULL, *end_cp is the
 * code-point offset in c of the last code point matched (nq has at least one). */
bool sg__t4_match(const char *c, const char *nq, size_t len, size_t *end_cp);

/* Compares NUL-terminated c with nq[0..len), both with their spaces removed, over
 * nq's length: 0 when nq is a prefix of c, else the sign of the first difference (c
 * ending first compares below). The order the run-together index is sorted in. */
int sg__t4_cmp(const char *c, const char *nq, size_t len);

/* A word's bits in an item's word signature (SG__EXT_WORDS stores each item's beside
 * its postings, docs/ARTIFACT.md): bit h(first byte) of the low 8 and, for a word of two
 * bytes or more, bit 8 + h'(first two bytes). A word that wm is a byte prefix of has at
 * least wm's bits, so an item whose signature lacks one of wm's bits has no word wm is
 * a prefix of. w has wl >= 1 bytes. */
static inline uint16_t sg__word_sig(const char *w, size_t wl) {
  uint32_t b0 = (unsigned char)w[0];
  uint32_t s = 1u << ((b0 * 0x9E3779B1u) >> 29);
  if (wl >= 2) s |= 1u << (8 + (((b0 << 8 | (unsigned char)w[1]) * 0x9E3779B1u) >> 29));
  return (uint16_t)s;
}

#endif
