#!/usr/bin/env bash
# Runs each fuzz target for a short budget (first argument, seconds) from its seed corpus.
set -u
secs=$1; shift
pass=0; fail=0
for f in "$@"; do
  name=$(basename "$f")
  seeds="tests/fuzz/corpus/${name#fuzz_}"
  work=$(mktemp -d)
  [ -d "$seeds" ] && cp -r "$seeds"/. "$work"/ 2>/dev/null
  if "$f" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=0 "$work" >"$work.log" 2>&1; then
    pass=$((pass+1)); echo "fuzz $name: ok ($(grep -c . "$work.log") log lines)"
  else
    fail=$((fail+1)); echo "FAIL fuzz $name"; tail -60 "$work.log"
  fi
  rm -rf "$work" "$work.log"
done
echo "fuzz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
