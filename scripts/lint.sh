#!/usr/bin/env bash
# Static analysis of src/ with cppcheck (`make lint`, part of `make test`).
#
# What is checked and why:
#   --enable=warning,performance,portability  the checks that find bugs (wrong or undefined
#       code, lost precision, wasted copies); "style" is left out: most of what it reports
#       here is taste (variable scope) or wrong about structs read through pointers.
#   --include=jansson.h  jansson's iteration macros (json_object_foreach, ...) must be known,
#       or cppcheck stops at the first one it meets; other system headers are not read
#       (their contents would only slow cppcheck down).
#   --std=c11  cppcheck 2.10 knows no C17, which changed no language rule (C11 + fixes).
#   scripts/cppcheck.supp  the findings that are wrong, each with its reason.
# Results are cached in build/cppcheck, so a second run rereads only changed files.
# Any finding fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cppcheck >/dev/null || { echo "lint: cppcheck is missing (scripts/deps.sh installs it)" >&2; exit 1; }
mkdir -p build/cppcheck
exec cppcheck -q -j"${LINT_JOBS:-2}" --std=c11 -D_GNU_SOURCE -Isrc \
  --include=/usr/include/jansson.h \
  --enable=warning,performance,portability \
  --suppressions-list=scripts/cppcheck.supp --inline-suppr \
  --cppcheck-build-dir=build/cppcheck \
  --error-exitcode=1 --template='{file}:{line}: {severity}: {message} [{id}]' \
  src
