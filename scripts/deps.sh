#!/usr/bin/env bash
# Installs the Debian packages suggestd needs that are missing. Idempotent and quiet when
# everything is present. Libraries are checked with pkg-config, tools with command -v.
set -euo pipefail
need=()
chk_pc() { pkg-config --exists "$1" 2>/dev/null || need+=("$2"); }
chk_cmd() { command -v "$1" >/dev/null 2>&1 || need+=("$2"); }
chk_pc libmicrohttpd libmicrohttpd-dev
chk_pc jansson libjansson-dev
chk_pc sqlite3 libsqlite3-dev
chk_pc libpq libpq-dev
chk_pc hiredis libhiredis-dev
chk_pc libsodium libsodium-dev
chk_pc libutf8proc libutf8proc-dev
chk_pc libcurl libcurl4-openssl-dev
# libcrypto: SHA-256 with the CPU's SHA instructions (artifact hashes, src/common/sha256.c).
chk_pc libcrypto libssl-dev
chk_pc cmocka libcmocka-dev
# libhttp-parser has no pkg-config file: look for its header.
[ -e /usr/include/http_parser.h ] || need+=(libhttp-parser-dev)
chk_cmd pkg-config pkg-config
chk_cmd cc gcc
chk_cmd make make
chk_cmd clang clang
# Static analysis (make lint) and the C style check (make format-check).
chk_cmd cppcheck cppcheck
chk_cmd clang-format clang-format
chk_cmd npm npm
# Headless Chromium for the browser tests (tests/node/browser.test.mjs) and a font for it.
chk_cmd chromium chromium
# Real servers for the PostgreSQL store and Redis edge tests (scripts/pg.sh, scripts/redis.sh),
# and the load tools of `make bench` (wrk, haproxy in front of several runtimes).
[ -x /usr/lib/postgresql/15/bin/initdb ] || need+=(postgresql-15)
chk_cmd psql postgresql-client-15
chk_cmd redis-server redis-server
chk_cmd redis-cli redis-tools
chk_cmd wrk wrk
chk_cmd jq jq
# `make deb` / `make deb-test`: dpkg-shlibdeps and lintian.
chk_cmd dpkg-shlibdeps dpkg-dev
chk_cmd lintian lintian
chk_cmd haproxy haproxy
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
[ -e /usr/bin/python3 ] && /usr/bin/python3 -c 'import pytest' 2>/dev/null || need+=(python3-pytest)
# libFuzzer + sanitizer runtimes for clang.
ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 || need+=(libclang-rt-14-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "deps: installing ${need[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
