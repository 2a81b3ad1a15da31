#!/usr/bin/env bash
# Runs each unit-test binary given as an argument; prints a closing "N passed, N failed".
set -u
pass=0; fail=0
for t in "$@"; do
  if out=$("$t" 2>&1); then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $t"; echo "$out" | tail -40; fi
done
echo "unit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
