#!/usr/bin/env bash
# What search analytics cost on the query path (issue 25): a runtime with analytics on
# (the default), one with `--analytics off`, and a second one with analytics on (the same
# configuration twice, so the difference reads against the machine's own noise), each
# next to nginx `return 200`, in interleaved rounds of the repeating city mix
# (bench/http_mix.sh: `wrk -t1 -c32`, 3,000 city prefixes cycled).
#
#   bench/analytics_overhead.sh ARTIFACT QUERIES [SECONDS] [ROUNDS] [OUT.json]
#
# Prints per target the median of its per-round requests/s ÷ nginx's; then the cost of
# analytics, from each round's own runs: in a round the three run one after the other
# (on, off, on2), so off ÷ mean(on, on2) − 1 cancels a drift of the machine across the
# round, and its median over the rounds is the cost; beside it the noise, the median of
# |on2 ÷ on − 1| (the same configuration twice, a minute apart). Only the repeating mix
# runs (HTTP_MIX_MIXES=repeat), so that more rounds fit the same time: with 5 rounds the
# median's own spread (a few %) was as large as the 3 % it is compared with, and the row
# read yes or no by the machine's noise (−4.6 % in one make bench, +4.6 % in the next).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
ART=$1 QUERIES=$2 SECS=${3:-5} ROUNDS=${4:-9} OUT=${5:-}
BIN=$PWD/build/suggestd
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
printf '#!/bin/sh\nexec "%s" "$@" --analytics off\n' "$BIN" >"$W/suggestd-off"
chmod +x "$W/suggestd-off"
HTTP_MIX_MIXES=repeat bench/http_mix.sh "$ART" "$QUERIES" "$SECS" "$ROUNDS" on="$BIN" off="$W/suggestd-off" \
  on2="$BIN" >"$W/runs.jsonl"
python3 - "$W/runs.jsonl" "$OUT" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rep = [r for r in runs if r["mix"] == "repeat"]
rps = lambda r: r.get("requests_per_sec") or r.get("rps") or r.get("requests/s")
nginx = {r["round"]: rps(r) for r in rep if r["target"] == "nginx-return"}
ratio = {}
for t in ("on", "off", "on2"):
    ratio[t] = statistics.median(rps(r) / nginx[r["round"]] for r in rep if r["target"] == t)
by = {(r["target"], r["round"]): rps(r) for r in rep}
rounds = sorted(nginx)
cost = statistics.median(by["off", k] / ((by["on", k] + by["on2", k]) / 2) - 1 for k in rounds)
noise = statistics.median(abs(by["on2", k] / by["on", k] - 1) for k in rounds)
out = {
    "rounds": len(nginx),
    "ratioToNginx": ratio,
    "analyticsCost": cost,
    "noise": noise,
    "within3Percent": cost <= 0.03,
}
print(json.dumps(out))
print(f"analytics on {ratio['on']:.3f}x nginx, off {ratio['off']:.3f}x, on again {ratio['on2']:.3f}x: "
      f"cost {100 * out['analyticsCost']:+.1f}% next to noise {100 * out['noise']:.1f}%")
if sys.argv[2]:
    json.dump(out, open(sys.argv[2], "w"))
PY
