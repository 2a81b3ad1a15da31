# suggestd — one obvious way to build.
#
#   make            build build/suggestd (release flags; warnings are shown, not fatal)
#   make run        install what is missing, build, serve the embedded default
#   make check      the inner loop: incremental build, unit tests (plain), the API tests of
#                   one area: `make check AREA=runtime` runs tests/api/test_*runtime*.py
#   make test       build and run every test: unit (plain, ASan/UBSan and, for the threaded
#                   parts, ThreadSanitizer), lint, fuzz smoke, API (and a few API files
#                   against a ThreadSanitizer build of the binary), the JS client
#                   (node --test) and the browser tests (headless Chromium); the store unit
#                   tests and the API suite run on SQLite and on PostgreSQL
#   make lint       cppcheck over src/ (scripts/lint.sh: what it checks and why)
#   make format-check  clang-format --dry-run --Werror over src/ and tests/
#   make unit, make api, make js, make browser, make fuzz-smoke: one suite of make test
#                   (scripts/run-api.sh tests/api/test_x.py runs one API test file)
#   make bench      benchmarks (bench/run.sh); make bench-pg: PostgreSQL vs SQLite (bench/pg.sh)
#   make soak       5 minutes of mixed load; fails on errors, RSS or fd growth (bench/soak.sh)
#   make crash-test 100 kill -9 trials during writes, imports and publishes
#   make install    binary, systemd units, /etc/suggestd/suggestd.env, man pages, docs
#                   (PREFIX=/usr/local, DESTDIR honoured)
#   make deb        a Debian package in build/deb/ (scripts/deb.sh); make deb-test
#                   installs it, runs it as the suggestd user, and purges it
#   make help       this list
#
# WERROR=1 makes every warning an error. `make test`, `make check` and .ci/run turn it
# on; a plain `make` leaves it off, so a newer compiler's new warning does not stop a
# user's build. Flags are not part of an object's dependencies: after changing WERROR or
# CFLAGS on a tree already built, `make clean` (CI always builds from scratch).
#
# Sources are found by globbing, so adding a file to a part's folder needs no edit here.
# Header dependencies come from the compiler (-MMD -MP: build/**/*.d), so touching a
# header rebuilds only the objects that include it.

CC      ?= cc
PKGS    := libmicrohttpd jansson sqlite3 libpq hiredis libsodium libutf8proc libcurl libcrypto
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN    := -Wall -Wextra -Wshadow -Wno-unused-parameter -Wstrict-prototypes \
           -Wmissing-prototypes -Wvla -Wformat=2
WERROR  ?= 0
ifeq ($(WERROR),1)
WARN    += -Werror
endif
# Each compile also writes its header dependencies next to its output (foo.o -> foo.o.d).
DEPFLAGS = -MMD -MP -MF $@.d
CSTD    := -std=c17 -D_GNU_SOURCE
B       := build
INCS    := -Isrc -I$(B)/gen
CFLAGS  ?= -O2 -g
ALL_CFLAGS := $(CSTD) $(WARN) $(INCS) $(PKG_CFLAGS) $(CFLAGS)
# libhttp-parser (the runtime listener's request parser) ships no pkg-config file.
LIBS    := $(PKG_LIBS) -lhttp_parser -lpthread -lm

LIB_SRC  := $(shell find src -name '*.c' ! -path 'src/main.c' | sort)
UNIT_SRC := $(shell find tests/unit -name 'test_*.c' 2>/dev/null | sort)
UNIT_HELPERS := $(shell find tests/unit -name '*.c' ! -name 'test_*.c' 2>/dev/null | sort)
FUZZ_SRC := $(shell find tests/fuzz -name 'fuzz_*.c' 2>/dev/null | sort)

REL_OBJ  := $(patsubst src/%.c,$(B)/obj/%.o,$(LIB_SRC))
SAN_OBJ  := $(patsubst src/%.c,$(B)/san/%.o,$(LIB_SRC))
TSAN_OBJ := $(patsubst src/%.c,$(B)/tsan/%.o,$(LIB_SRC))
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
TSANFLAGS := -fsanitize=thread -fno-omit-frame-pointer

.PHONY: all deps run test test-build test-suites check unit unit-plain unit-san unit-tsan unit-pg api-tsan \
        lint format-check fuzz fuzz-smoke api api-pg bench bench-pg soak \
        clean format datasets \
        js browser node-deps openapi crash-test crash-smoke help man install deb deb-test

all: $(B)/suggestd

deps:
	@scripts/deps.sh

# `make V=1` prints the full compiler command lines.
V ?= 0
ifeq ($(V),0)
Q := @
say = @printf '  %-6s %s\n' $(1) $(2)
else
Q :=
say = @true
endif

# The version (`suggestd --version`, the metrics' build_info). The release number is the
# newest release tag (vX.Y.Z) reachable from the commit built, else the VERSION file (a
# tree without git history or tags); the revision is `git describe --tags --always
# --dirty` ("v0.2.0-3-gabc1234-dirty", or a bare commit id before the first tag). Only
# common/version.c sees them, and the stamp file changes only when they do, so a new
# commit recompiles one file. Releasing: CONTRIBUTING.md.
VERSION_TAG := $(shell git describe --tags --abbrev=0 --match 'v[0-9]*.[0-9]*.[0-9]*' 2>/dev/null)
VERSION_NUMBER := $(if $(VERSION_TAG),$(VERSION_TAG:v%=%),$(shell cat VERSION 2>/dev/null || echo 0.0.0))
VERSION_GIT := $(shell git describe --tags --always --dirty --match 'v[0-9]*.[0-9]*.[0-9]*' 2>/dev/null || echo unknown)
VERSION_DEFS := -DSG_VERSION_NUMBER='"$(VERSION_NUMBER)"' -DSG_VERSION_GIT='"$(VERSION_GIT)"'
$(B)/version.stamp: FORCE
	@mkdir -p $(B)
	@echo '$(VERSION_DEFS)' | cmp -s - $@ || echo '$(VERSION_DEFS)' > $@
VERSION_OBJ := $(B)/obj/common/version.o $(B)/san/common/version.o $(B)/tsan/common/version.o
$(VERSION_OBJ): $(B)/version.stamp
$(VERSION_OBJ): ALL_CFLAGS += $(VERSION_DEFS)
.PHONY: FORCE
FORCE:

# The library in three builds: release (obj), ASan/UBSan (san), ThreadSanitizer (tsan).
$(B)/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(B)/san/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(call say,CC-SAN,$<)
	$(Q)$(CC) $(ALL_CFLAGS) -O1 $(SANFLAGS) $(DEPFLAGS) -c $< -o $@

$(B)/tsan/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(call say,CC-TSAN,$<)
	$(Q)$(CC) $(ALL_CFLAGS) -O1 $(TSANFLAGS) $(DEPFLAGS) -c $< -o $@

# The dashboard's pages and the browser widget, built into the binary (scripts/embed.sh).
DASH_ASSETS := $(sort $(wildcard src/dashboard/assets/*)) clients/js/dist/suggestd.js
DASH_GEN := $(B)/gen/dashboard_assets.h
$(DASH_GEN): $(DASH_ASSETS) scripts/embed.sh
	@mkdir -p $(dir $@)
	$(call say,EMBED,$@)
	$(Q)scripts/embed.sh $@ $(DASH_ASSETS)
$(B)/obj/dashboard/pages.o $(B)/san/dashboard/pages.o $(B)/tsan/dashboard/pages.o: $(DASH_GEN)

$(B)/libsuggestd.a: $(REL_OBJ)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(B)/libsuggestd-san.a: $(SAN_OBJ)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(B)/libsuggestd-tsan.a: $(TSAN_OBJ)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(B)/suggestd: src/main.c $(B)/libsuggestd.a
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(DEPFLAGS) $< $(B)/libsuggestd.a $(LIBS) -o $@

# --- unit tests: one binary per tests/unit/**/test_*.c, linked with cmocka -------------
# The helpers (tests/unit/**/*.c not named test_*) are compiled once per build and linked
# into every test binary.
UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/unit/%,$(UNIT_SRC))
UNIT_SAN_BINS := $(patsubst tests/unit/%.c,$(B)/unit-san/%,$(UNIT_SRC))
UNIT_HELP_OBJ := $(patsubst tests/unit/%.c,$(B)/unit/%.o,$(UNIT_HELPERS))
UNIT_HELP_SAN := $(patsubst tests/unit/%.c,$(B)/unit-san/%.o,$(UNIT_HELPERS))
UNIT_HELP_TSAN := $(patsubst tests/unit/%.c,$(B)/unit-tsan/%.o,$(UNIT_HELPERS))
.SECONDARY: $(UNIT_HELP_OBJ) $(UNIT_HELP_SAN) $(UNIT_HELP_TSAN)

$(B)/unit/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit $(DEPFLAGS) -c $< -o $@

$(B)/unit-san/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(call say,CC-SAN,$<)
	$(Q)$(CC) $(ALL_CFLAGS) -O1 $(SANFLAGS) -DSGT_SANITIZER -Itests/unit $(DEPFLAGS) -c $< -o $@

$(B)/unit-tsan/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(call say,CC-TSAN,$<)
	$(Q)$(CC) $(ALL_CFLAGS) -O1 $(TSANFLAGS) -Itests/unit $(DEPFLAGS) -c $< -o $@

$(B)/unit/%: tests/unit/%.c $(UNIT_HELP_OBJ) $(B)/libsuggestd.a
	@mkdir -p $(dir $@)
	$(call say,TEST,$<)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit $(DEPFLAGS) $< $(UNIT_HELP_OBJ) $(B)/libsuggestd.a $(LIBS) -lcmocka -o $@

$(B)/unit-san/%: tests/unit/%.c $(UNIT_HELP_SAN) $(B)/libsuggestd-san.a
	@mkdir -p $(dir $@)
	$(call say,TEST-SAN,$<)
	$(Q)$(CC) $(ALL_CFLAGS) -O1 $(SANFLAGS) -DSGT_SANITIZER -Itests/unit $(DEPFLAGS) $< $(UNIT_HELP_SAN) $(B)/libsuggestd-san.a $(LIBS) -lcmocka -o $@

$(B)/unit-tsan/%: tests/unit/%.c $(UNIT_HELP_TSAN) $(B)/libsuggestd-tsan.a
	@mkdir -p $(dir $@)
	$(call say,TEST-TSAN,$<)
	$(Q)$(CC) $(ALL_CFLAGS) -O1 $(TSANFLAGS) -Itests/unit $(DEPFLAGS) $< $(UNIT_HELP_TSAN) $(B)/libsuggestd-tsan.a $(LIBS) -lcmocka -o $@

unit-plain: $(UNIT_BINS)
	@scripts/run-unit.sh $(UNIT_BINS)

unit-san: $(UNIT_SAN_BINS)
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  scripts/run-unit.sh $(UNIT_SAN_BINS)

# ThreadSanitizer (build/unit-tsan): the unit tests that run threads. The snapshot
# publication (RCU) between the loader and the query workers, the runtime's loader and
# workers, the answer cache's sets, the selection-event writer, the analytics shards and
# their shipper, tier 3's per-thread scratch, the drain thread, the connection gate, the worker pools, the metrics and
# rate-limit atomics, SQLite readers beside a writer, the edges' racing writers.
# A new test that starts threads belongs here.
TSAN_UNIT := runtime/test_rcu runtime/test_server runtime/test_answer_cache \
             state/test_events state/test_local state/test_redis state/test_state \
             state/test_analytics control/test_drain \
             http/mhd/test_gate common/test_metrics common/test_ratelimit common/test_redisx \
             common/test_workpool \
             store/sqlite/test_readers edge/test_edge edge/dir/test_edge_dir \
             edge/redis/test_edge_redis runtime/test_snapshot search/test_artifact \
             search/test_words
UNIT_TSAN_BINS := $(addprefix $(B)/unit-tsan/,$(TSAN_UNIT))
unit-tsan: $(UNIT_TSAN_BINS)
	@TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 scripts/run-unit.sh $(UNIT_TSAN_BINS)

unit: unit-plain unit-san unit-tsan

# The threads of whole processes under ThreadSanitizer: build/suggestd-tsan runs the API
# test files that drive the publish worker (sync and queued publishes), its lease renewer,
# the edge outbox writes, the runtime's loader and query workers and the selection-event
# writer and the analytics shipper and drain at once. Every report of every process
# (servers and admin commands) lands in build/tsan-api/; any report fails the target,
# whatever the tests said. (About 2 minutes on two idle cores. test_publish_queue.py and
# test_control_pools.py also run clean under TSan, but the first takes 6 minutes there
# and both hold wall-clock bounds that a TSan build misses.)
TSAN_API := tests/api/test_publish_race.py tests/api/test_versions.py \
            tests/api/test_edge_outbox.py tests/api/test_runtime_http.py \
            tests/api/test_end_to_end.py tests/api/test_analytics.py
$(B)/suggestd-tsan: src/main.c $(B)/libsuggestd-tsan.a
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -O1 $(TSANFLAGS) $(DEPFLAGS) $< $(B)/libsuggestd-tsan.a $(LIBS) -o $@

api-tsan: $(B)/suggestd-tsan
	@rm -rf $(B)/tsan-api && mkdir -p $(B)/tsan-api
	@TSAN_OPTIONS=log_path=$(CURDIR)/$(B)/tsan-api/report:second_deadlock_stack=1 \
	  SUGGESTD_BINARY=$(CURDIR)/$(B)/suggestd-tsan scripts/run-api.sh $(TSAN_API); rc=$$?; \
	  if ls $(B)/tsan-api/report* >/dev/null 2>&1; then \
	    cat $(B)/tsan-api/report*; echo "api-tsan: ThreadSanitizer reports above" >&2; exit 1; fi; \
	  exit $$rc

# The backend-neutral store tests (tests/unit/store/test_*.c) and the PostgreSQL-only ones
# (tests/unit/store/postgres/) on a throwaway
# PostgreSQL cluster, plain and sanitizer builds (scripts/with-pg.sh: skipped with a
# message when PostgreSQL cannot start, except under CI=true).
STORE_UNIT := $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/store/test_*.c tests/unit/store/postgres/test_*.c))
unit-pg: $(addprefix $(B)/unit/,$(STORE_UNIT)) $(addprefix $(B)/unit-san/,$(STORE_UNIT))
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  scripts/with-pg.sh "store unit tests on PostgreSQL" scripts/run-unit.sh $^

# --- fuzz targets (clang + libFuzzer); `make fuzz-smoke` runs each for a short budget ---
# The library is compiled once for all targets (build/fuzzobj, with libFuzzer's coverage
# instrumentation but not its main: -fsanitize=fuzzer-no-link) and every object is linked
# into each target, as when each target compiled all of src/ itself (12 times as slow).
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(B)/fuzz/%,$(FUZZ_SRC))
FUZZ_FLAGS := $(CSTD) $(WARN) $(INCS) $(PKG_CFLAGS) -O1 -g
FUZZ_OBJ := $(patsubst src/%.c,$(B)/fuzzobj/%.o,$(LIB_SRC))
$(B)/fuzzobj/dashboard/pages.o: $(DASH_GEN)
.SECONDARY: $(FUZZ_OBJ)

$(B)/fuzzobj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(call say,CC-FUZZ,$<)
	$(Q)clang $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link,address,undefined $(DEPFLAGS) -c $< -o $@

# (fuzz_typo includes the unit tests' brute force as source; its .d file lists them.)
$(B)/fuzz/%: tests/fuzz/%.c $(FUZZ_OBJ)
	@mkdir -p $(dir $@)
	$(call say,FUZZ,$<)
	$(Q)clang $(FUZZ_FLAGS) -fsanitize=fuzzer,address,undefined $(DEPFLAGS) $< $(FUZZ_OBJ) $(LIBS) -o $@

fuzz: $(FUZZ_BINS)

# Each target fuzzes for FUZZ_SECONDS, FUZZ_JOBS targets at a time (one core each).
FUZZ_SECONDS ?= 10
FUZZ_JOBS ?= 2
fuzz-smoke: $(FUZZ_BINS)
	@FUZZ_JOBS=$(FUZZ_JOBS) scripts/fuzz-smoke.sh $(FUZZ_SECONDS) $(FUZZ_BINS)

# --- black-box API tests: pytest against the real binary on random ports ---------------
# The API suite records every answer for the OpenAPI check (tests/node/openapi.test.mjs).
# Three test files run at a time (SUGGESTD_API_JOBS): most of a test is waiting on the
# server (a test file's processes use about a third of a core), so on two cores the suite
# takes about a third as long as one file at a time.
API_JOBS ?= 3
api: $(B)/suggestd
	@rm -f $(B)/api-responses.ndjson
	@SUGGESTD_API_JOBS=$(API_JOBS) SUGGESTD_RECORD=$(CURDIR)/$(B)/api-responses.ndjson scripts/run-api.sh

# The same suite with every store on PostgreSQL (tests/api/conftest.py, SUGGESTD_TEST_DATABASE).
api-pg: $(B)/suggestd
	@SUGGESTD_API_JOBS=$(API_JOBS) scripts/with-pg.sh "API suite on PostgreSQL" scripts/run-api.sh

# --- JavaScript client (clients/js) and Chromium tests (tests/node) ---------------------
js:
	@cd clients/js && node --test test/

node-deps:
	@scripts/node-deps.sh

browser: $(B)/suggestd node-deps
	@scripts/run-browser.sh

# docs/openapi.yaml: validated, then checked against live answers (after `make api`).
openapi: $(B)/suggestd node-deps
	@cd tests/node && SUGGESTD_RECORD=$(CURDIR)/$(B)/api-responses.ndjson node --test openapi.test.mjs


# --- kill -9 trials (tests/crash/crash_test.py): 100 for `make crash-test`, 5 in `make test` --
crash-test: $(B)/suggestd
	@python3 tests/crash/crash_test.py --trials $${CRASH_TRIALS:-100}

crash-smoke: $(B)/suggestd
	@python3 tests/crash/crash_test.py --trials 5

# `make test` builds everything first, TEST_JOBS compilers at a time (CI calls plain
# `make test`, which would otherwise compile one file at a time), fetching the datasets
# and node tools meanwhile; then it runs the suites one after another (-j1 whatever the
# caller's -j: each suite sizes its own parallelism, and two at once would fight over
# the cores their timings assume).
TEST_JOBS ?= 2
test:
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) WERROR=1 test-build
	@$(MAKE) --no-print-directory -j1 WERROR=1 test-suites

test-build: all datasets node-deps $(UNIT_BINS) $(UNIT_SAN_BINS) $(UNIT_TSAN_BINS) $(FUZZ_BINS) \
            $(B)/suggestd-tsan

# Each suite's wall time is printed after it (and all of them at the end), so a CI log
# shows where the minutes go.
SUITES := format-check lint unit-plain unit-san unit-tsan unit-pg fuzz-smoke api api-pg api-tsan crash-smoke js browser \
          openapi deb-test
test-suites: all datasets
	@t=""; for s in $(SUITES); do \
	  start=$$(date +%s); \
	  $(MAKE) --no-print-directory $$s || exit 1; \
	  t="$$t $$s=$$(( $$(date +%s) - start ))s"; echo "== suite $$s: $$(( $$(date +%s) - start )) s"; \
	done; echo "== suite times:$$t"

# The inner loop (CONTRIBUTING.md): an incremental build with every warning an error, the
# plain unit tests, then the API tests whose file name contains AREA:
# `make check AREA=runtime` runs tests/api/test_*runtime*.py; no AREA, no API tests.
AREA ?=
CHECK_API := $(if $(AREA),$(wildcard tests/api/test_*$(AREA)*.py))
check:
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) WERROR=1 all $(UNIT_BINS)
	@scripts/run-unit.sh $(UNIT_BINS)
ifeq ($(AREA),)
	@echo "check: no AREA, so no API tests (e.g. make check AREA=runtime: tests/api/test_*runtime*.py)"
else ifeq ($(CHECK_API),)
	@echo "check: no tests/api/test_*$(AREA)*.py" >&2; exit 1
else
	@scripts/run-api.sh $(CHECK_API)
endif

run: deps
	@$(MAKE) --no-print-directory all
	@scripts/run.sh

bench: all
	@bench/run.sh

# PostgreSQL next to SQLite: 1M-item import + publish, control-plane requests/s with one
# and two control processes on one database (bench/pg.sh; docs/PERFORMANCE.md).
bench-pg: all
	@bench/pg.sh

soak: all
	@bench/soak.sh

datasets:
	@scripts/datasets.sh

# `make help`: the targets, from the comment at the top of this file.
help:
	@sed -n '/^#   make/,/^#$$/p' $(firstword $(MAKEFILE_LIST)) | sed -e '$$d' -e 's/^# //'

# --- install and package (docs/INSTALL.md) ------------------------------------------
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
DOCDIR     ?= $(PREFIX)/share/doc/suggestd
SYSCONFDIR ?= /etc
UNITDIR    ?= $(PREFIX)/lib/systemd/system
UNITS      := suggestd.service suggestd-control.service suggestd-runtime.service
DOCS       := README.md $(wildcard docs/*.md) docs/openapi.yaml

# Man pages from the binary's --help texts (scripts/man.py).
man: $(B)/suggestd scripts/man.py
	@rm -rf $(B)/man
	$(Q)scripts/man.py $(B)/suggestd $(B)/man

$(B)/systemd/%.service: dist/systemd/%.service.in dist/systemd/service.inc
	@mkdir -p $(dir $@)
	$(Q)sed -e '/@SERVICE@/{r dist/systemd/service.inc' -e 'd;}' $< | \
	  sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' > $@

# The configuration file is installed only when absent: an operator's edits survive.
install: all man $(addprefix $(B)/systemd/,$(UNITS))
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(DOCDIR)/docs \
	  $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/suggestd
	install -m 0755 $(B)/suggestd $(DESTDIR)$(BINDIR)/suggestd
	install -m 0644 $(B)/man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(addprefix $(B)/systemd/,$(UNITS)) $(DESTDIR)$(UNITDIR)/
	install -m 0644 README.md $(DESTDIR)$(DOCDIR)/
	install -m 0644 $(filter docs/%,$(DOCS)) $(DESTDIR)$(DOCDIR)/docs/
	[ -e $(DESTDIR)$(SYSCONFDIR)/suggestd/suggestd.env ] || \
	  install -m 0644 dist/suggestd.env $(DESTDIR)$(SYSCONFDIR)/suggestd/suggestd.env

deb:
	@scripts/deb.sh

deb-test:
	@scripts/deb-test.sh

# Our C sources (not the node packages' under tests/node/node_modules).
FORMAT_SRC = $(shell find src tests -name '*.[ch]' -not -path '*/node_modules/*')
format:
	clang-format -i $(FORMAT_SRC)

# Static analysis (scripts/lint.sh: cppcheck, its options and scripts/cppcheck.supp).
lint:
	@scripts/lint.sh

# Fails when a C file differs from `make format` (.clang-format). Not yet part of
# `make test`: the tree is formatted in one sweep first, then this joins the suites.
format-check:
	@clang-format --dry-run --Werror $(FORMAT_SRC)

clean:
	rm -rf $(B)

# The header dependencies the compiler wrote (DEPFLAGS); absent before the first build.
-include $(shell find $(B) -name '*.d' 2>/dev/null)
