#!/usr/bin/env bash
# Runs each fuzz target for a short budget (first argument, seconds) from its seed corpus.
#
#   FUZZ_JOBS=2 scripts/fuzz-smoke.sh SECONDS TARGET...
#
# FUZZ_JOBS targets run at a time (default 1). A libFuzzer run is one single-threaded
# process, so on a machine with that many idle cores each target still gets a whole core
# for its full budget: the same number of executions as one at a time, in less wall time.
# Each target's result is printed in the order given, once all have run.
set -u
secs=$1; shift
jobs=${FUZZ_JOBS:-1}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

run() {
  local f=$1 name seeds work
  name=$(basename "$f")
  seeds="tests/fuzz/corpus/${name#fuzz_}"
  work=$out/$name.corpus
  mkdir -p "$work"
  [ -d "$seeds" ] && cp -r "$seeds"/. "$work"/ 2>/dev/null
  "$f" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=0 "$work" \
    >"$out/$name.log" 2>&1
  echo $? >"$out/$name.rc"
}

for f in "$@"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  run "$f" &
done
wait

pass=0; fail=0
for f in "$@"; do
  name=$(basename "$f")
  if [ "$(cat "$out/$name.rc" 2>/dev/null)" = 0 ]; then
    pass=$((pass+1)); echo "fuzz $name: ok ($(grep -c . "$out/$name.log") log lines)"
  else
    fail=$((fail+1)); echo "FAIL fuzz $name"; tail -60 "$out/$name.log"
  fi
done
echo "fuzz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
