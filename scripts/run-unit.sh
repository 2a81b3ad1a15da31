#!/usr/bin/env bash
# Runs each unit-test binary given as an argument, UNIT_JOBS at a time (default 2: the
# tests are independent processes, each in its own temporary files, and the two longest,
# the brute-force comparisons under ASan, take minutes each); prints each failure's last
# lines and a closing "N passed, N failed".
set -u
jobs=${UNIT_JOBS:-2}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
running=0
i=0
for t in "$@"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
  ( "$t" >"$out/$i.log" 2>&1; echo $? >"$out/$i.rc" ) &
  running=$((running + 1))
  i=$((i + 1))
done
wait
pass=0; fail=0
i=0
for t in "$@"; do
  if [ "$(cat "$out/$i.rc" 2>/dev/null)" = 0 ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: $t"
    tail -40 "$out/$i.log"
  fi
  i=$((i + 1))
done
echo "unit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
