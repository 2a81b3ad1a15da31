#!/usr/bin/env bash
# Runs the black-box API tests (pytest, Debian's python3-pytest) against build/suggestd.
#
#   scripts/run-api.sh [PYTEST ARGS]...   one pytest run (e.g. a file, or -k name)
#   SUGGESTD_API_JOBS=2 scripts/run-api.sh
#                                         the whole suite, one pytest per test file, that
#                                         many files at a time (no pytest-xdist in Debian's
#                                         python3-pytest); each file's output is shown when
#                                         it fails, a one-line summary otherwise
set -euo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
jobs=${SUGGESTD_API_JOBS:-1}
if [ "$jobs" -le 1 ] || [ $# -gt 0 ]; then
  # The whole suite, unless the arguments name test files or directories themselves
  # (pytest would run tests/api and then those files again).
  where=tests/api
  for a in "$@"; do
    case $a in -*) ;; *) [ -e "${a%%::*}" ] && where= ;; esac
  done
  exec "$PY" -m pytest -q -p no:cacheprovider $where "$@"
fi

out=$(mktemp -d /tmp/suggestd-api-XXXXXX)
trap 'rm -rf "$out"' EXIT
start=$(date +%s)
# Largest files first, so the last ones to start are short and the workers end together.
# shellcheck disable=SC2016
ls -S tests/api/test_*.py | xargs -P "$jobs" -I{} sh -c '
  f=$1; log=$2/$(basename "$f").log
  "$0" -m pytest -q -p no:cacheprovider "$f" >"$log" 2>&1; echo $? >"$log.rc"' "$PY" {} "$out"

failed=0
# Counts from each file's closing pytest line ("== 3 failed, 40 passed in 9.1s ==").
total() {
  for l in "$out"/*.log; do tail -1 "$l"; done | grep -o "[0-9][0-9]* $1" | awk '{s += $1} END {print s + 0}'
}
for log in "$out"/*.log; do
  rc=$(cat "$log.rc")
  name=tests/api/$(basename "$log" .log)
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 5 ]; then
    echo "$name: $(tail -1 "$log" | tr -d '=' | sed 's/^ *//')"
  else
    failed=$((failed + 1))
    echo "===== $name FAILED (exit $rc) ====="
    cat "$log"
  fi
done
echo "api: $(total passed) passed, $(total failed) failed, $(total error) errors," \
  "$(total skipped) skipped in $(($(date +%s) - start)) s ($jobs at a time)"
[ "$failed" -eq 0 ]
