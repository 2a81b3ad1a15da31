# suggestd — one obvious way to build.
#
#   make            build build/suggestd (release flags)
#   make run        install what is missing, build, serve the embedded default
#   make test       build and run every test: unit (plain + ASan/UBSan), fuzz smoke, API,
#                   the JS client (node --test) and the browser tests (headless Chromium);
#                   the store unit tests and the API suite run on SQLite and on PostgreSQL
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
# Sources are found by globbing, so adding a file to a part's folder needs no edit here.

CC      ?= cc
PKGS    := libmicrohttpd jansson sqlite3 libpq hiredis libsodium libutf8proc libcurl
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN    := -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter -Wstrict-prototypes \
           -Wmissing-prototypes -Wvla -Wformat=2
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
HDRS     := $(shell find src tests -name '*.h' 2>/dev/null)

REL_OBJ  := $(patsubst src/%.c,$(B)/obj/%.o,$(LIB_SRC))
SAN_OBJ  := $(patsubst src/%.c,$(B)/san/%.o,$(LIB_SRC))
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

.PHONY: all deps run test test-build test-suites unit unit-plain unit-san unit-pg fuzz fuzz-smoke api api-pg bench bench-pg soak \
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

# The version (`suggestd --version`, the metrics' build_info): the VERSION file and the
# tree's `git describe`. Only common/version.c sees them, and the stamp file changes only
# when they do, so a new commit recompiles one file.
VERSION_NUMBER := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
VERSION_GIT := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
VERSION_DEFS := -DSG_VERSION_NUMBER='"$(VERSION_NUMBER)"' -DSG_VERSION_GIT='"$(VERSION_GIT)"'
$(B)/version.stamp: FORCE
	@mkdir -p $(B)
	@echo '$(VERSION_DEFS)' | cmp -s - $@ || echo '$(VERSION_DEFS)' > $@
$(B)/obj/common/version.o $(B)/san/common/version.o: $(B)/version.stamp
$(B)/obj/common/version.o $(B)/san/common/version.o: ALL_CFLAGS += $(VERSION_DEFS)
.PHONY: FORCE
FORCE:

$(B)/obj/%.o: src/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(B)/san/%.o: src/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(call say,CC-SAN,$<)
	$(Q)$(CC) $(ALL_CFLAGS) -O1 $(SANFLAGS) -c $< -o $@

# The dashboard's pages and the browser widget, built into the binary (scripts/embed.sh).
DASH_ASSETS := $(sort $(wildcard src/dashboard/assets/*)) clients/js/dist/suggestd.js
DASH_GEN := $(B)/gen/dashboard_assets.h
$(DASH_GEN): $(DASH_ASSETS) scripts/embed.sh
	@mkdir -p $(dir $@)
	$(call say,EMBED,$@)
	$(Q)scripts/embed.sh $@ $(DASH_ASSETS)
$(B)/obj/dashboard/pages.o $(B)/san/dashboard/pages.o: $(DASH_GEN)

$(B)/libsuggestd.a: $(REL_OBJ)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(B)/libsuggestd-san.a: $(SAN_OBJ)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(B)/suggestd: src/main.c $(B)/libsuggestd.a
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $< $(B)/libsuggestd.a $(LIBS) -o $@

# --- unit tests: one binary per tests/unit/**/test_*.c, linked with cmocka -------------
UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/unit/%,$(UNIT_SRC))
UNIT_SAN_BINS := $(patsubst tests/unit/%.c,$(B)/unit-san/%,$(UNIT_SRC))

$(B)/unit/%: tests/unit/%.c $(UNIT_HELPERS) $(B)/libsuggestd.a
	@mkdir -p $(dir $@)
	$(call say,TEST,$<)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit $< $(UNIT_HELPERS) $(B)/libsuggestd.a $(LIBS) -lcmocka -o $@

$(B)/unit-san/%: tests/unit/%.c $(UNIT_HELPERS) $(B)/libsuggestd-san.a
	@mkdir -p $(dir $@)
	$(call say,TEST-SAN,$<)
	$(Q)$(CC) $(ALL_CFLAGS) -O1 $(SANFLAGS) -Itests/unit $< $(UNIT_HELPERS) $(B)/libsuggestd-san.a $(LIBS) -lcmocka -o $@

unit-plain: $(UNIT_BINS)
	@scripts/run-unit.sh $(UNIT_BINS)

unit-san: $(UNIT_SAN_BINS)
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  scripts/run-unit.sh $(UNIT_SAN_BINS)

unit: unit-plain unit-san

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

$(B)/fuzzobj/%.o: src/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(call say,CC-FUZZ,$<)
	$(Q)clang $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link,address,undefined -c $< -o $@

$(B)/fuzz/%: tests/fuzz/%.c $(FUZZ_OBJ) $(HDRS)
	@mkdir -p $(dir $@)
	$(call say,FUZZ,$<)
	$(Q)clang $(FUZZ_FLAGS) -fsanitize=fuzzer,address,undefined $< $(FUZZ_OBJ) $(LIBS) -o $@

# fuzz_typo includes the unit tests' brute force (tests/unit/search) as source.
$(B)/fuzz/fuzz_typo: $(UNIT_HELPERS)

fuzz: $(FUZZ_BINS)

# Each target fuzzes for FUZZ_SECONDS, FUZZ_JOBS targets at a time (one core each).
FUZZ_SECONDS ?= 20
FUZZ_JOBS ?= 2
fuzz-smoke: $(FUZZ_BINS)
	@FUZZ_JOBS=$(FUZZ_JOBS) scripts/fuzz-smoke.sh $(FUZZ_SECONDS) $(FUZZ_BINS)

# --- black-box API tests: pytest against the real binary on random ports ---------------
# The API suite records every answer for the OpenAPI check (tests/node/openapi.test.mjs).
# Two test files run at a time (SUGGESTD_API_JOBS): most of a test is waiting on the
# server, so the suite takes about half as long on two cores.
API_JOBS ?= 2
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
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) test-build
	@$(MAKE) --no-print-directory -j1 test-suites

test-build: all datasets node-deps $(UNIT_BINS) $(UNIT_SAN_BINS) $(FUZZ_BINS)

test-suites: all datasets unit unit-pg fuzz-smoke api api-pg crash-smoke js browser openapi deb-test

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

format:
	clang-format -i $(shell find src tests -name '*.[ch]')

clean:
	rm -rf $(B)
