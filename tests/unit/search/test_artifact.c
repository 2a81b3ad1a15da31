/* The artifact: deterministic bytes, fragments, locale resolution, and a reader that
 * rejects or survives every truncation and random corruption. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/util.h"
#include "compiler/format.h"
#include "compiler/normalize.h"
#include "randlist.h"
#include "search/artifact.h"

static void compile_list(const sgt_list *l, sg_buf *out) {
  sg_compile_opts opts = {"en", sgt_locales, 3, 0};
  sg_buf_init(out, 0);
  assert_int_equal(sg_compile(l->items, l->n, &opts, out), 0);
}

static void test_deterministic_under_shuffle(void **s) {
  (void)s;
  for (uint64_t seed = 1; seed <= 5; seed++) {
    sgt_list l;
    sgt_list_gen(&l, 300, seed);
    sg_buf a, b;
    compile_list(&l, &a);
    uint64_t st = seed * 31;
    for (size_t i = l.n; i > 1; i--) {
      size_t j = sgt_rand_below(&st, i);
      sg_compile_item t = l.items[i - 1];
      l.items[i - 1] = l.items[j];
      l.items[j] = t;
    }
    compile_list(&l, &b);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);
    assert_int_equal(a.len % 8, 0);
    sg_buf_free(&a);
    sg_buf_free(&b);
    sgt_list_free(&l);
  }
}

static void test_appends_to_buffer(void **s) {
  (void)s;
  /* Offsets are relative to the artifact's first byte, wherever it lands in *out. */
  sgt_list l;
  sgt_list_gen(&l, 50, 9);
  sg_buf a, b;
  compile_list(&l, &a);
  sg_buf_init(&b, 0);
  sg_buf_puts(&b, "prefix");
  sg_compile_opts opts = {"en", sgt_locales, 3, 0};
  assert_int_equal(sg_compile(l.items, l.n, &opts, &b), 0);
  assert_int_equal(b.len, a.len + 6);
  assert_memory_equal(b.data + 6, a.data, a.len);
  sg_buf_free(&a);
  sg_buf_free(&b);
  sgt_list_free(&l);
}

static sg_compile_item mk(const char *id, const char *value, const char *dv, int64_t rank,
                          const char *parent) {
  sg_compile_item it = {0};
  it.id = id;
  it.value = value;
  it.display_value = dv;
  it.rank = rank;
  it.parent_id = parent;
  return it;
}

static void query_ids(const sg_artifact *a, int loc, const char *q, char *out, size_t cap) {
  char nq[256];
  long n = sg_normalize_into(q, strlen(q), nq, sizeof nq);
  assert_true(n >= 0);
  sg_query_result r;
  sg_artifact_query(a, loc, nq, (size_t)n, &r);
  out[0] = '\0';
  for (size_t i = 0; i < r.n; i++) {
    char id[64];
    assert_int_equal(sgt_fragment_id(r.items[i].json, r.items[i].len, id, sizeof id), 0);
    if (i) strncat(out, ",", cap - strlen(out) - 1);
    strncat(out, id, cap - strlen(out) - 1);
  }
}

static void test_fragments_and_locales(void **s) {
  (void)s;
  const char *const fr_al[] = {"Vieux Port"};
  sg_item_locale fr[] = {{"fr", "Bâle \"ville\"", fr_al, 1, NULL}};
  const char *const al[] = {"Old Town"};
  sg_compile_item it[] = {mk("itm_ch", "CH", "Switzerland", 9, NULL),
                          mk("itm_bs", "BS", "Basel", 5, "itm_ch"),
                          mk("itm_b2", "B2", "Bern", 5, "itm_ch")};
  it[1].locales = fr;
  it[1].n_locales = 1;
  it[2].aliases = al;
  it[2].n_aliases = 1;
  const char *const locs[] = {"fr", "en"};
  sg_compile_opts opts = {"en", locs, 2, 0};
  sg_buf out;
  sg_buf_init(&out, 0);
  assert_int_equal(sg_compile(it, 3, &opts, &out), 0);
  sg_artifact *a;
  assert_int_equal(sg_artifact_open_mem(out.data, out.len, &a), 0);
  assert_string_equal(sg_artifact_default_locale(a), "en");
  const char *tag;
  assert_int_equal(sg_artifact_resolve_locale(a, "fr-CH", &tag), 0);
  assert_string_equal(tag, "fr");
  assert_int_equal(sg_artifact_resolve_locale(a, "FR", &tag), 0);
  assert_int_equal(sg_artifact_resolve_locale(a, "de", &tag), 1);
  assert_string_equal(tag, "en");
  assert_int_equal(sg_artifact_resolve_locale(a, NULL, &tag), 1);
  assert_int_equal(sg_artifact_resolve_locale(a, "", &tag), 1);
  /* Item ids: every item, nothing else (no prefix, no extension, no empty id). */
  static const char *const have[] = {"itm_ch", "itm_bs", "itm_b2"};
  for (size_t k = 0; k < 3; k++) assert_true(sg_artifact_has_item(a, have[k], strlen(have[k])));
  static const char *const not [] = {"itm_c", "itm_chx", "itm_b", "itm_zz", "itm_a", "x", ""};
  for (size_t k = 0; k < sizeof not / sizeof *not ; k++)
    assert_false(sg_artifact_has_item(a, not [k], strlen(not [k])));

  char ids[256];
  query_ids(a, 1, "b", ids, sizeof ids);
  assert_string_equal(ids, "itm_bs,itm_b2"); /* rank tie: "basel" < "bern" */
  query_ids(a, 1, "old", ids, sizeof ids);
  assert_string_equal(ids, "itm_b2");
  query_ids(a, 1, "town", ids, sizeof ids);
  assert_string_equal(ids, "itm_b2");
  query_ids(a, 0, "old", ids, sizeof ids);
  assert_string_equal(ids, "itm_b2"); /* fr falls back to the base aliases */
  query_ids(a, 0, "port", ids, sizeof ids);
  assert_string_equal(ids, "itm_bs");
  query_ids(a, 0, "BALE", ids, sizeof ids);
  assert_string_equal(ids, "itm_bs");
  query_ids(a, 1, "bale", ids, sizeof ids);
  assert_string_equal(ids, "");

  sg_query_result r;
  sg_artifact_query(a, 0, "bale", 4, &r);
  assert_int_equal(r.n, 1);
  const char *want =
      "{\"itemId\":\"itm_bs\",\"value\":\"BS\",\"displayValue\":\"Bâle \\\"ville\\\"\","
      "\"ancestors\":[{\"itemId\":\"itm_ch\",\"value\":\"CH\",\"displayValue\":\"Switzerland\"}]}";
  assert_int_equal(r.items[0].len, strlen(want));
  assert_memory_equal(r.items[0].json, want, strlen(want));
  sg_artifact_query(a, 1, "swi", 3, &r);
  assert_int_equal(r.n, 1);
  want = "{\"itemId\":\"itm_ch\",\"value\":\"CH\",\"displayValue\":\"Switzerland\"}";
  assert_memory_equal(r.items[0].json, want, strlen(want));
  /* An out-of-range locale index serves the default. */
  sg_artifact_query(a, 7, "swi", 3, &r);
  assert_int_equal(r.n, 1);
  sg_artifact_close(a);
  sg_buf_free(&out);
}

/* An item's description (docs/DESIGN.md §2): in the fragment right after displayValue when set,
 * per locale with the displayValue fallback (the locale's own, else the base one), absent
 * rather than empty, never in ancestors, and never matched. */
static void test_fragment_description(void **s) {
  (void)s;
  sg_item_locale a_loc[] = {{"fr", NULL, NULL, 0, "Texas, États-Unis"},
                            {"de", "Austin (TX)", NULL, 0, NULL}};
  sg_item_locale b_loc[] = {{"FR", NULL, NULL, 0, "x\",\"displayValue\":\"evil"}};
  sg_compile_item it[] = {mk("itm_a", "austin", "Austin", 3, NULL),
                          mk("itm_b", "amarillo", "Amarillo", 2, NULL),
                          mk("itm_c", "abilene", "Abilene", 1, "itm_a")};
  it[0].description = "Texas, \"United\" States\n";
  it[0].locales = a_loc;
  it[0].n_locales = 2;
  it[1].locales = b_loc;
  it[1].n_locales = 1;
  const char *const locs[] = {"en", "fr", "de"};
  sg_compile_opts opts = {"en", locs, 3, 0};
  sg_buf out;
  sg_buf_init(&out, 0);
  assert_int_equal(sg_compile(it, 3, &opts, &out), 0);
  sg_artifact *a;
  assert_int_equal(sg_artifact_open_mem(out.data, out.len, &a), 0);
  static const char *const want[3][3] = {
      {/* en: the base description, none for the others */
       "{\"itemId\":\"itm_a\",\"value\":\"austin\",\"displayValue\":\"Austin\","
       "\"description\":\"Texas, \\\"United\\\" States\\n\"}",
       "{\"itemId\":\"itm_b\",\"value\":\"amarillo\",\"displayValue\":\"Amarillo\"}",
       "{\"itemId\":\"itm_c\",\"value\":\"abilene\",\"displayValue\":\"Abilene\","
       "\"ancestors\":[{\"itemId\":\"itm_a\",\"value\":\"austin\",\"displayValue\":\"Austin\"}]}"},
      {/* fr: each locale's own (tags case-insensitive) */
       "{\"itemId\":\"itm_a\",\"value\":\"austin\",\"displayValue\":\"Austin\","
       "\"description\":\"Texas, États-Unis\"}",
       "{\"itemId\":\"itm_b\",\"value\":\"amarillo\",\"displayValue\":\"Amarillo\","
       "\"description\":\"x\\\",\\\"displayValue\\\":\\\"evil\"}",
       "{\"itemId\":\"itm_c\",\"value\":\"abilene\",\"displayValue\":\"Abilene\","
       "\"ancestors\":[{\"itemId\":\"itm_a\",\"value\":\"austin\",\"displayValue\":\"Austin\"}]}"},
      {/* de: its own displayValue, the base description */
       "{\"itemId\":\"itm_a\",\"value\":\"austin\",\"displayValue\":\"Austin (TX)\","
       "\"description\":\"Texas, \\\"United\\\" States\\n\"}",
       "{\"itemId\":\"itm_b\",\"value\":\"amarillo\",\"displayValue\":\"Amarillo\"}",
       "{\"itemId\":\"itm_c\",\"value\":\"abilene\",\"displayValue\":\"Abilene\","
       "\"ancestors\":[{\"itemId\":\"itm_a\",\"value\":\"austin\","
       "\"displayValue\":\"Austin (TX)\"}]}"},
  };
  for (int loc = 0; loc < 3; loc++) {
    sg_query_result r;
    sg_artifact_query(a, loc, "a", 1, &r);
    assert_int_equal(r.n, 3);
    for (size_t i = 0; i < 3; i++) {
      assert_int_equal(r.items[i].len, strlen(want[loc][i]));
      assert_memory_equal(r.items[i].json, want[loc][i], strlen(want[loc][i]));
    }
    /* The runtime's displayValue scan (highlighting) is not fooled by a description. */
    char dv[64];
    long n = sg_fragment_display_value(&r.items[1], dv, sizeof dv);
    assert_int_equal(n, 8);
    assert_string_equal(dv, "Amarillo");
  }
  /* Never matched: no word of a description is a key in any locale. */
  char ids[256];
  for (int loc = 0; loc < 3; loc++) {
    query_ids(a, loc, "texas", ids, sizeof ids);
    assert_string_equal(ids, "");
    query_ids(a, loc, "evil", ids, sizeof ids);
    assert_string_equal(ids, "");
    query_ids(a, loc, "states", ids, sizeof ids);
    assert_string_equal(ids, "");
  }
  sg_artifact_close(a);
  sg_buf_free(&out);
}

static void test_empty_list_and_file(void **s) {
  (void)s;
  const char *const locs[] = {"en"};
  sg_compile_opts opts = {"en", locs, 1, 0};
  sg_buf out;
  sg_buf_init(&out, 0);
  assert_int_equal(sg_compile(NULL, 0, &opts, &out), 0);
  char path[] = "/tmp/sgart_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, out.data, out.len), (ssize_t)out.len);
  close(fd);
  sg_artifact *a;
  assert_int_equal(sg_artifact_open_file(path, &a), 0);
  assert_int_equal(sg_artifact_item_count(a), 0);
  sg_query_result r;
  sg_artifact_query(a, 0, "x", 1, &r);
  assert_int_equal(r.n, 0);
  sg_artifact_query(a, 0, "", 0, &r);
  assert_int_equal(r.n, 0);
  sg_artifact_close(a);
  unlink(path);
  assert_int_equal(sg_artifact_open_file("/nonexistent/x", &a), -1);
  /* The default locale must be supported. */
  const char *const other[] = {"fr"};
  sg_compile_opts bad = {"en", other, 1, 0};
  assert_int_equal(sg_compile(NULL, 0, &bad, &out), -1);
  sg_buf_free(&out);
}

/* sg_artifact_load_file: the runtime's loader. The bytes must hash to the contentHash,
 * and the loaded copy is private: truncating the file afterwards cannot fault a reader
 * (a shared mapping would raise SIGBUS on the next lookup). */
static void test_load_file_verifies_hash_and_owns_its_copy(void **s) {
  (void)s;
  sg_compile_item items[] = {mk("itm_1", "andorra", NULL, 1, NULL),
                             mk("itm_2", "angola", NULL, 2, NULL)};
  const char *const locs[] = {"en"};
  sg_compile_opts opts = {"en", locs, 1, 0};
  sg_buf out;
  sg_buf_init(&out, 0);
  assert_int_equal(sg_compile(items, 2, &opts, &out), 0);
  char hash[72];
  sg_sha256_tagged(out.data, out.len, hash);
  char path[] = "/tmp/sgart_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, out.data, out.len), (ssize_t)out.len);
  sg_artifact *a;
  assert_int_equal(sg_artifact_load_file(path, hash + 7, &a), 0); /* the bare hex too */
  sg_artifact_close(a);
  assert_int_equal(sg_artifact_load_file(path, hash, &a), 0);
  assert_int_equal(ftruncate(fd, 16), 0);
  sg_query_result r;
  sg_artifact_query(a, 0, "an", 2, &r);
  assert_int_equal(r.n, 2);
  assert_memory_equal(r.items[0].json, "{\"itemId\":\"itm_2\"", 17);
  sg_artifact_close(a);
  /* Truncated now: refused. */
  assert_int_equal(sg_artifact_load_file(path, hash, &a), -1);
  /* Same size, one byte changed: refused as not matching its hash. */
  out.data[out.len / 2] ^= 1;
  assert_int_equal(pwrite(fd, out.data, out.len, 0), (ssize_t)out.len);
  errno = 0;
  assert_int_equal(sg_artifact_load_file(path, hash, &a), -1);
  assert_int_equal(errno, EBADMSG);
  assert_null(a);
  close(fd);
  unlink(path);
  assert_int_equal(sg_artifact_load_file("/nonexistent/x", hash, &a), -1);
  sg_buf_free(&out);
}

/* A checksum of the answers to a few hundred prefixes and typo variants. */
static uint64_t answers_sum(const sg_artifact *a) {
  uint64_t h = 1469598103934665603ull;
  char q[32];
  for (int i = 0; i < 400; i++) {
    snprintf(q, sizeof q, i % 2 ? "place %05d" : "plcae %04d", i * 97 % 40000);
    sg_query_result r;
    sg_artifact_query(a, 0, q, strlen(q), &r);
    h = (h ^ r.n) * 1099511628211ull;
    for (size_t k = 0; k < r.n; k++)
      for (uint32_t b = 0; b < r.items[k].len; b++)
        h = (h ^ (unsigned char)r.items[k].json[b] ^ (uint64_t)r.items[k].edits << 8) *
            1099511628211ull;
  }
  return h;
}

/* The pages of the mapping that starts at p mapped by huge pages, in kB (smaps), or -1. */
static long huge_kb_of_mapping(const void *p) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) return -1;
  char line[512], want[32];
  snprintf(want, sizeof want, "%lx-", (unsigned long)(uintptr_t)p);
  long kb = -1;
  bool in = false;
  while (fgets(line, sizeof line, f)) {
    if (strchr(line, '-') && strchr(line, ' ') && strchr(line, '-') < strchr(line, ' '))
      in = !strncmp(line, want, strlen(want));
    else if (in && sscanf(line, "ShmemPmdMapped: %ld kB", &kb) == 1)
      break;
  }
  fclose(f);
  return kb;
}

/* sg_artifact_settle: the sealed memory starts on a huge-page boundary, settling it in
 * steps (from any offset: a step starts on a huge page) reaches its end, the answers stay
 * what they were, and where the kernel took the advice the memory is then mapped by huge
 * pages. A kernel that knows the advice must not refuse a step as invalid (EINVAL): only
 * ENOSYS (no such advice) or a passing shortage (EAGAIN, EBUSY, ENOMEM) may decline. */
static void settle_keeps_answers(const sg_artifact *a) {
  size_t len;
  const void *p = sg_artifact_bytes(a, &len);
  assert_true(len > 4u << 20);
  assert_int_equal((uintptr_t)p % (2u << 20), 0);
  uint64_t before = answers_sum(a);
  size_t done = 4096; /* not on a huge page: the first step starts at 0 */
  int steps = 0, failed = 0, err = 0;
  while (done < len) {
    size_t was = done;
    int rc = sg_artifact_settle(a, &done, 2u << 20);
    if (rc < 0 && !failed++) err = errno;
    assert_true(rc != 0);
    assert_true(done > was);
    steps += rc > 0;
  }
  assert_int_equal(done, len);
  assert_int_equal(answers_sum(a), before);
  if (!failed) {
    assert_int_equal(steps, (int)(len >> 21));
    long kb = huge_kb_of_mapping(p);
    assert_true(kb >= (long)((len >> 21) << 11));
  } else {
    assert_true(err == ENOSYS || err == EAGAIN || err == EBUSY || err == ENOMEM);
    fprintf(stderr, "# settle: the kernel declined (%s); answers checked, huge pages not\n",
            strerror(err));
  }
  assert_int_equal(sg_artifact_settle(a, &done, 2u << 20), 0); /* nothing left */
  assert_int_equal(done, len);
}

/* An artifact of many read pieces (the loader reads 1 MiB at a time into two buffers
 * and hashes each on a thread of its own while it copies it): accepted whole, and refused
 * with one byte changed in the first piece, in a piece in the middle, or in the last
 * byte — whichever buffer held it. */
static void test_load_file_many_pieces(void **s) {
  (void)s;
  enum { N = 40000 };
  sg_compile_item *items = calloc(N, sizeof *items);
  char(*ids)[16] = calloc(N, 16), (*vals)[96] = calloc(N, 96);
  assert_non_null(items);
  assert_non_null(ids);
  assert_non_null(vals);
  for (int i = 0; i < N; i++) {
    snprintf(ids[i], 16, "itm_%07d", i);
    snprintf(vals[i], 96, "place %05d of a list long enough to span several read pieces %d", i,
             i * 7919 % 100000);
    items[i] = mk(ids[i], vals[i], NULL, i % 1000, NULL);
  }
  const char *const locs[] = {"en"};
  sg_compile_opts opts = {"en", locs, 1, 0};
  sg_buf out;
  sg_buf_init(&out, 0);
  assert_int_equal(sg_compile(items, N, &opts, &out), 0);
  assert_true(out.len > 5u << 20); /* five pieces at least */
  char hash[72];
  sg_sha256_tagged(out.data, out.len, hash);
  char path[] = "/tmp/sgart_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, out.data, out.len), (ssize_t)out.len);
  sg_artifact *a;
  assert_int_equal(sg_artifact_load_file(path, hash, &a), 0);
  sg_query_result r;
  sg_artifact_query(a, 0, "place 0399", 10, &r);
  assert_int_equal(r.n, 10);
  settle_keeps_answers(a);
  sg_artifact_close(a);
  const size_t at[] = {100, (2u << 20) + 5, (3u << 20) + (1u << 19), out.len - 1};
  for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
    unsigned char b = (unsigned char)out.data[at[i]] ^ 0x10;
    assert_int_equal(pwrite(fd, &b, 1, (off_t)at[i]), 1);
    errno = 0;
    a = (sg_artifact *)1;
    assert_int_equal(sg_artifact_load_file(path, hash, &a), -1);
    assert_int_equal(errno, EBADMSG);
    assert_null(a);
    assert_int_equal(pwrite(fd, out.data + at[i], 1, (off_t)at[i]), 1);
  }
  assert_int_equal(sg_artifact_load_file(path, hash, &a), 0);
  sg_artifact_close(a);
  /* Not our sealed memory: nothing to move, said at once. */
  assert_int_equal(sg_artifact_open_mem(out.data, out.len, &a), 0);
  size_t done = 0;
  assert_int_equal(sg_artifact_settle(a, &done, 2u << 20), -1);
  assert_int_equal(errno, ENOTSUP);
  assert_int_equal(done, out.len);
  sg_artifact_close(a);
  close(fd);
  unlink(path);
  sg_buf_free(&out);
  free(items);
  free(ids);
  free(vals);
}

/* The sealed memory an artifact is served from (sg_artifact_sink_*): exactly the declared
 * length, in order; once adopted, sealed so that neither a write nor a truncation nor a
 * growth can reach what readers see, whoever holds the file. */
static int seals_of_mapping(const void *p, int *seals) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) return -1;
  char line[512];
  int rc = -1;
  while (rc && fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 || (uintptr_t)p < lo || (uintptr_t)p >= hi) continue;
    if (!strstr(line, "memfd:suggestd-artifact")) break;
    char mf[96];
    snprintf(mf, sizeof mf, "/proc/self/map_files/%lx-%lx", lo, hi);
    int fd = open(mf, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      rc = -2; /* the mapping is the memfd, but map_files needs privileges */
      break;
    }
    *seals = fcntl(fd, F_GET_SEALS);
    /* Every way to change the bytes or the size is refused. */
    char b = 'x';
    if (*seals >= 0 && pwrite(fd, &b, 1, 0) == -1 && errno == EPERM && ftruncate(fd, 16) == -1 &&
        errno == EPERM && fallocate(fd, 0, 0, 1 << 30) == -1 && errno == EPERM)
      rc = 0;
    close(fd);
  }
  fclose(f);
  return rc;
}

static void test_sink_sealed(void **s) {
  (void)s;
  sg_compile_item items[] = {mk("itm_1", "andorra", NULL, 1, NULL),
                             mk("itm_2", "angola", NULL, 2, NULL)};
  const char *const locs[] = {"en"};
  sg_compile_opts opts = {"en", locs, 1, 0};
  sg_buf out;
  sg_buf_init(&out, 0);
  assert_int_equal(sg_compile(items, 2, &opts, &out), 0);
  sg_artifact *a = NULL;
  /* Too small to be an artifact at all. */
  errno = 0;
  assert_null(sg_artifact_sink_new(3));
  assert_int_equal(errno, EINVAL);
  /* More bytes than declared: refused, nothing written past the end. */
  sg_artifact_sink *k = sg_artifact_sink_new(out.len);
  assert_non_null(k);
  assert_int_equal(sg_artifact_sink_write(k, out.data, out.len - 1), 0);
  errno = 0;
  assert_int_equal(sg_artifact_sink_write(k, out.data, 2), -1);
  assert_int_equal(errno, EBADMSG);
  /* Adopted before every byte arrived: refused (and the sink consumed). */
  errno = 0;
  assert_int_equal(sg_artifact_sink_adopt(k, &a), -1);
  assert_int_equal(errno, EBADMSG);
  assert_null(a);
  /* Bytes that are no artifact: refused. */
  k = sg_artifact_sink_new(out.len);
  assert_non_null(k);
  char *junk = calloc(1, out.len);
  assert_int_equal(sg_artifact_sink_write(k, junk, out.len), 0);
  free(junk);
  errno = 0;
  assert_int_equal(sg_artifact_sink_adopt(k, &a), -1);
  assert_int_equal(errno, EINVAL);
  /* Never adopted: freed. */
  k = sg_artifact_sink_new(out.len);
  assert_int_equal(sg_artifact_sink_write(k, out.data, 10), 0);
  sg_artifact_sink_free(k);
  /* In two writes, then adopted: served, and sealed. */
  k = sg_artifact_sink_new(out.len);
  assert_int_equal(sg_artifact_sink_write(k, out.data, 100), 0);
  assert_int_equal(sg_artifact_sink_write(k, out.data + 100, out.len - 100), 0);
  assert_int_equal(sg_artifact_sink_adopt(k, &a), 0);
  size_t n;
  const void *bytes = sg_artifact_bytes(a, &n);
  assert_int_equal(n, out.len);
  assert_memory_equal(bytes, out.data, out.len);
  sg_query_result r;
  sg_artifact_query(a, 0, "an", 2, &r);
  assert_int_equal(r.n, 2);
  int seals = 0, rc = seals_of_mapping(bytes, &seals);
  assert_true(rc == 0 || rc == -2); /* -1: not a memfd mapping at all */
  if (rc == 0)
    assert_int_equal(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL),
                     F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  else
    fprintf(stderr, "test_sink_sealed: /proc/self/map_files not readable, seals not checked\n");
  sg_artifact_close(a);
  sg_buf_free(&out);
}

/* Runs a handful of queries, which must not crash or read out of bounds. */
static void poke(const sg_artifact *a) {
  static const char *const qs[] = {"", "s", "sa", "san", "a", "abc", "東", "x y", "zzzz"};
  sg_query_result r;
  unsigned sum = 0;
  for (int loc = -1; loc < 4; loc++)
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
      sg_artifact_query(a, loc, qs[i], strlen(qs[i]), &r);
      assert_true(r.n <= SG_BUCKET_ITEMS);
      /* Touch every byte of every fragment so ASan checks the ranges. */
      for (size_t k = 0; k < r.n; k++)
        for (uint32_t b = 0; b < r.items[k].len; b++) sum += (unsigned char)r.items[k].json[b];
    }
  /* Filtered by ancestor (within.c), for a few of the artifact's own ids. */
  for (uint32_t o = 0; o < sg_artifact_item_count(a) && o < 40; o += 3) {
    sg_artifact_query(a, 0, "", 0, &r);
    for (size_t k = 0; k < r.n; k++) {
      char id[64];
      if (sgt_fragment_id(r.items[k].json, r.items[k].len, id, sizeof id)) continue;
      sg_within w;
      if (sg_artifact_within(a, id, strlen(id), &w)) continue;
      for (size_t i = 0; i < sizeof qs / sizeof *qs; i++)
        for (unsigned kk = 0; kk < 3; kk++) {
          sg_artifact_query_within(a, (int)(o % 4) - 1, qs[i], strlen(qs[i]), kk, &w, &r);
          assert_true(r.n <= SG_BUCKET_ITEMS);
          for (size_t j = 0; j < r.n; j++)
            for (uint32_t b = 0; b < r.items[j].len; b++) sum += (unsigned char)r.items[j].json[b];
        }
      break;
    }
  }
  (void)sum;
  const char *tag;
  sg_artifact_resolve_locale(a, "fr-CA", &tag);
  assert_non_null(tag);
}

static void test_truncations_rejected(void **s) {
  (void)s;
  sgt_list l;
  sgt_list_gen(&l, 60, 77);
  sg_buf out;
  compile_list(&l, &out);
  for (size_t len = 0; len < out.len; len++) {
    /* An exact-size heap copy, so ASan sees any read past the end. */
    char *cp = malloc(len ? len : 1);
    memcpy(cp, out.data, len);
    sg_artifact *a = NULL;
    assert_int_equal(sg_artifact_open_mem(cp, len, &a), -1);
    assert_null(a);
    free(cp);
  }
  sg_buf_free(&out);
  sgt_list_free(&l);
}

static void test_random_corruption(void **s) {
  (void)s;
  sgt_list l;
  sgt_list_gen(&l, 80, 99);
  sg_buf out;
  compile_list(&l, &out);
  uint64_t st = 12345;
  size_t opened = 0;
  char *cp = malloc(out.len);
  for (int iter = 0; iter < 4000; iter++) {
    memcpy(cp, out.data, out.len);
    size_t flips = 1 + sgt_rand_below(&st, 4);
    for (size_t f = 0; f < flips; f++) {
      /* Half the flips hit the header and locale records, where the offsets live. */
      size_t pos =
          sgt_rand_below(&st, 2) ? sgt_rand_below(&st, 72 + 3 * 72) : sgt_rand_below(&st, out.len);
      cp[pos] = (char)(sgt_rand_below(&st, 3) == 0 ? cp[pos] ^ (char)(1u << sgt_rand_below(&st, 8))
                                                   : (char)sgt_rand(&st));
    }
    sg_artifact *a;
    if (sg_artifact_open_mem(cp, out.len, &a) == 0) {
      opened++;
      poke(a);
      sg_artifact_close(a);
    }
  }
  free(cp);
  assert_true(opened > 0); /* flips in text or JSON bytes are not detectable, and harmless */
  sg_buf_free(&out);
  sgt_list_free(&l);
}

/* The filter's sections (format.h, SG__EXT_TREE and SG__EXT_WITHIN): every word of them
 * overwritten at random is either refused at open or leaves every filtered query in
 * bounds (ASan in the -san build); a list without parents has neither section. */
static void test_within_sections_corrupted(void **s) {
  (void)s;
  sgt_list l;
  sgt_list_gen(&l, 80, 4242);
  sg_buf out;
  compile_list(&l, &out);
  uint64_t ext_off, n_ext;
  memcpy(&ext_off, out.data + 72, 8);
  memcpy(&n_ext, out.data + 80, 8);
  assert_true(n_ext >= 2); /* the tree and at least one locale */
  uint64_t st = 777;
  size_t opened = 0, refused = 0;
  char *cp = malloc(out.len);
  for (int iter = 0; iter < 3000; iter++) {
    memcpy(cp, out.data, out.len);
    const unsigned char *rec =
        (const unsigned char *)out.data + ext_off + 24 * sgt_rand_below(&st, n_ext);
    uint64_t so, sl;
    memcpy(&so, rec + 8, 8);
    memcpy(&sl, rec + 16, 8);
    if (sl < 4) continue;
    size_t at = so + 4 * sgt_rand_below(&st, sl / 4);
    uint32_t v =
        sgt_rand_below(&st, 2) ? (uint32_t)sgt_rand(&st) : (uint32_t)sgt_rand_below(&st, 200);
    memcpy(cp + at, &v, 4);
    sg_artifact *a;
    if (sg_artifact_open_mem(cp, out.len, &a) == 0) {
      opened++;
      poke(a);
      sg_artifact_close(a);
    } else {
      refused++;
    }
  }
  free(cp);
  assert_true(refused > 0);
  sg_buf_free(&out);
  sgt_list_free(&l);

  sg_compile_item it[] = {mk("itm_a", "A", "Andorra la Vella", 3, NULL),
                          mk("itm_b", "B", "Anderlecht", 2, NULL)};
  sg_compile_opts opts = {"en", (const char *const[]){"en"}, 1, 0};
  sg_buf_init(&out, 0);
  assert_int_equal(sg_compile(it, 2, &opts, &out), 0);
  memcpy(&ext_off, out.data + 72, 8);
  memcpy(&n_ext, out.data + 80, 8);
  for (uint64_t i = 0; i < n_ext; i++) { /* other features' sections, none of the filter's */
    uint32_t kind;
    memcpy(&kind, out.data + ext_off + 24 * i, 4);
    assert_true(kind != SG__EXT_TREE && kind != SG__EXT_WITHIN);
  }
  sg_artifact *a;
  assert_int_equal(sg_artifact_open_mem(out.data, out.len, &a), 0);
  sg_within w;
  sg_query_result r;
  assert_int_equal(sg_artifact_within(a, "itm_a", 5, &w), 0);
  sg_artifact_query_within(a, 0, "and", 3, 0, &w, &r);
  assert_int_equal(r.n, 0);
  assert_int_equal(sg_artifact_within(a, "itm_zz", 6, &w), -1);
  sg_artifact_close(a);
  sg_buf_free(&out);
}

/* Format versions (docs/ARTIFACT.md): this build writes format 6 and opens 6 and the
 * previous release's 5 (a real 0.2.0 artifact of the fuzz corpus) by its rules; any
 * other version, and an extension directory of unknown kinds, is refused. */
static void test_format_versions(void **s) {
  (void)s;
  sg_compile_item it[] = {mk("itm_a", "A", "Andorra la Vella", 3, NULL),
                          mk("itm_b", "B", "Anderlecht", 2, NULL)};
  sg_compile_opts opts = {"en", (const char *const[]){"en"}, 1, 0};
  sg_buf out;
  sg_buf_init(&out, 0);
  assert_int_equal(sg_compile(it, 2, &opts, &out), 0);
  sg_artifact *a;
  assert_int_equal(sg_artifact_open_mem(out.data, out.len, &a), 0);
  assert_int_equal(sg_artifact_format(a), 6);
  char ids[256];
  query_ids(a, 0, "and", ids, sizeof ids);
  assert_string_equal(ids, "itm_a,itm_b");
  sg_artifact_close(a);

  unsigned char *cp = malloc(out.len);
  assert_non_null(cp);
  for (uint32_t v = 0; v < 9; v++) {
    memcpy(cp, out.data, out.len);
    memcpy(cp + 8, &v, 4); /* little-endian machine */
    int rc = sg_artifact_open_mem(cp, out.len, &a);
    assert_int_equal(rc, v == 6 ? 0 : -1); /* 5's header is shorter: these bytes are not 5 */
    if (rc == 0) sg_artifact_close(a);
    assert_int_equal(sg_artifact_format_readable(v), v == 5 || v == 6);
  }
  /* One extension record, read from the header's first bytes: an unknown kind. */
  memcpy(cp, out.data, out.len);
  uint64_t zero = 0, one = 1;
  memcpy(cp + 72, &zero, 8);
  memcpy(cp + 80, &one, 8);
  assert_int_equal(sg_artifact_open_mem(cp, out.len, &a), -1);
  free(cp);
  sg_buf_free(&out);

  /* A format-5 artifact written by 0.2.0. */
  assert_int_equal(sg_artifact_open_file("tests/fuzz/corpus/artifact/andorra.art", &a), 0);
  assert_int_equal(sg_artifact_format(a), 5);
  sg_query_result r;
  sg_artifact_query(a, 0, "sant", 4, &r);
  assert_true(r.n > 0);
  /* The filter by ancestor on format 5 (no sections): read from the fragments. The
   * answer is every match that lists the ancestor, in the unfiltered order. */
  static const char anc[] = "itm_city_3041563";
  sg_within w;
  assert_int_equal(sg_artifact_within(a, anc, strlen(anc), &w), 0);
  for (unsigned k = 0; k < 3; k++) {
    sg_query_result f;
    sg_artifact_query_within(a, 0, "", 0, k, &w, &f);
    assert_true(f.n > 0);
    for (size_t i = 0; i < f.n; i++) {
      const char *an = memmem(f.items[i].json, f.items[i].len, "\"ancestors\"", 11);
      assert_non_null(an);
      assert_non_null(
          memmem(an, f.items[i].len - (size_t)(an - f.items[i].json), anc, strlen(anc)));
    }
  }
  sg_query_result all, f;
  sg_artifact_query(a, 0, "e", 1, &all);
  sg_artifact_query_within(a, 0, "e", 1, 0, &w, &f);
  size_t j = 0;
  for (size_t i = 0; i < all.n && j < f.n; i++)
    if (memmem(all.items[i].json, all.items[i].len, "\"ancestors\"", 11) &&
        memmem(all.items[i].json, all.items[i].len, anc, strlen(anc)) &&
        memmem(all.items[i].json, all.items[i].len, anc, strlen(anc)) != all.items[i].json + 11)
      assert_ptr_equal(all.items[i].json, f.items[j++].json);
  assert_int_equal(sg_artifact_within(a, "itm_nope", 8, &w), -1);
  sg_artifact_close(a);
}

static void test_garbage(void **s) {
  (void)s;
  sg_artifact *a;
  assert_int_equal(sg_artifact_open_mem("", 0, &a), -1);
  assert_int_equal(sg_artifact_open_mem("SGART\0\0\0garbage", 15, &a), -1);
  char big[4096] = {0};
  memcpy(big, "SGART\0\0\0", 8);
  assert_int_equal(sg_artifact_open_mem(big, sizeof big, &a), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_deterministic_under_shuffle),
      cmocka_unit_test(test_appends_to_buffer),
      cmocka_unit_test(test_fragments_and_locales),
      cmocka_unit_test(test_fragment_description),
      cmocka_unit_test(test_empty_list_and_file),
      cmocka_unit_test(test_load_file_verifies_hash_and_owns_its_copy),
      cmocka_unit_test(test_load_file_many_pieces),
      cmocka_unit_test(test_sink_sealed),
      cmocka_unit_test(test_truncations_rejected),
      cmocka_unit_test(test_random_corruption),
      cmocka_unit_test(test_format_versions),
      cmocka_unit_test(test_within_sections_corrupted),
      cmocka_unit_test(test_garbage),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
