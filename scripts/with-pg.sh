#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL 15 cluster (scripts/pg.sh, with the test
# settings `start DIR tests` explains) and stops the cluster afterwards, whatever the
# command's outcome:
#
#   scripts/with-pg.sh WHAT COMMAND [ARG]...
#
# The command sees SUGGESTD_TEST_DATABASE (the server's maintenance database, for the API
# suite: tests/api/conftest.py creates a database per data dir) and SUGGESTD_TEST_STORE
# (the same URL: the store unit tests' fixture creates a database per test).
# When no cluster can be started (PostgreSQL not installed, initdb failing), WHAT is
# skipped with the reason, exit 0; under CI=true that is a failure instead, so CI always
# runs the PostgreSQL tests for real.
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:?usage: with-pg.sh WHAT COMMAND [ARG]...}
shift
# The cluster lives in /dev/shm when that is a tmpfs with 4 GiB free (the suite's
# databases and WAL stay far below that). The API suite creates and drops a database per
# data dir, over a thousand in all, each about 300 files: on ext4 every new file's inode
# search walks the recently deleted ones, which took a third of both cores (perf), and
# moving to tmpfs took the suite from about 540 s to 420 s. What the tests prove does not
# change: they kill suggestd processes and PostgreSQL backends, never the machine, and a
# tmpfs keeps every write a killed process made.
base=/tmp
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] &&
   [ "$(df -Pk /dev/shm | awk 'NR == 2 {print $4}')" -ge $((4 * 1024 * 1024)) ]; then
  base=/dev/shm
fi
dir=$(mktemp -d "$base/suggestd-pg-XXXXXX")
err=$(mktemp /tmp/suggestd-pg-err-XXXXXX)
if ! url=$(scripts/pg.sh start "$dir" tests 2>"$err"); then
  reason=$(tail -5 "$err")
  scripts/pg.sh stop "$dir" >/dev/null 2>&1
  rm -f "$err"
  if [ "${CI:-}" = "true" ]; then
    echo "$what: FAILED: cannot start PostgreSQL (CI=true requires it): $reason" >&2
    exit 1
  fi
  echo "$what: SKIPPED: cannot start PostgreSQL ($reason); run scripts/deps.sh to install it" >&2
  exit 0
fi
rm -f "$err"
trap 'scripts/pg.sh stop "$dir"' EXIT
trap 'exit 130' INT TERM
export SUGGESTD_TEST_DATABASE=$url
export SUGGESTD_TEST_STORE=$url
echo "$what: on PostgreSQL at $url" >&2
"$@"
