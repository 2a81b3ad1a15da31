#!/usr/bin/env bash
# Two builds of suggestd side by side on the 4.5M package names (docs/PERFORMANCE.md,
# "Typo tolerance"): compile CPU time, peak RSS and artifact size, then the in-process
# exact and typo mixes (bench/typo_bench.c, each build reading its own artifact),
# alternating, ROUNDS rounds.
#
#   bench/typo_compare.sh BEFORE_TREE AFTER_TREE [PRE_TREE]
#
# A tree is a checkout with `make all` done (e.g. a `git worktree add` of an older
# commit); PRE_TREE adds a third build to the compile table only (the reference the size
# and compile bars are relative to). The query mixes are made by the after tree's
# bench/query_bench.c (every prefix of 2,000 names evenly spread through the file; the
# exact mix keeps every 12th of at least 4 code points, the typo mix is the same
# prefixes with 1 or 2 edits). Writes its files under bench/work/compare.
set -euo pipefail
BEFORE=$(cd "$1" && pwd) AFTER=$(cd "$2" && pwd) PRE=${3:+$(cd "$3" && pwd)}
ROUNDS=${ROUNDS:-2}
cd "$AFTER"
IN=$AFTER/.cache/datasets/packages.jsonl
[ -f "$IN" ] || scripts/datasets.sh
W=$AFTER/bench/work/compare
mkdir -p "$W"
flags() { pkg-config --cflags jansson libutf8proc "$@"; }
libs() { pkg-config --libs jansson libutf8proc libsodium libcrypto "$@"; }
for t in BEFORE AFTER; do
  tree=${!t}
  cc -std=c17 -D_GNU_SOURCE -O2 -I"$tree/src" $(flags) "$tree/bench/typo_bench.c" \
    "$tree/build/libsuggestd.a" $(libs) -lm -o "$W/typo_bench.$t"
done
cc -std=c17 -D_GNU_SOURCE -O2 -I"$AFTER/src" $(flags sqlite3) "$AFTER/bench/query_bench.c" \
  "$AFTER/build/libsuggestd.a" $(libs sqlite3) -lm -o "$W/query_bench"

for r in $(seq "$ROUNDS"); do
  for t in PRE BEFORE AFTER; do
    tree=${!t:-}
    [ -n "$tree" ] || continue
    /usr/bin/time -f "%U %S %M" -o "$W/$t.time" "$tree/build/suggestd" compile --input "$IN" \
      --output "$W/$t.art" >"$W/$t.json"
    read -r u s m <"$W/$t.time"
    echo "compile $t round $r: cpu $(awk -v a="$u" -v b="$s" 'BEGIN {print a + b}') s, peak rss $((m / 1024)) MB," \
      "artifact $(stat -c %s "$W/$t.art") bytes"
  done
done
rm -f "$W/PRE.art"

if [ ! -s "$W/pk.typo" ]; then
  "$W/query_bench" --artifact "$W/AFTER.art" --items "$IN" --fts-db "$W/fts.db" --mix spread \
    --names 2000 --rounds 2 --fts-max 100 --fts-seconds 2 --queries-out "$W/pk.queries" \
    --typo-queries-out "$W/pk.typo" --content-hash "$(jq -r .contentHash "$W/AFTER.json")" >/dev/null
  rm -f "$W/fts.db"
  awk 'length($0) >= 4 && NR % 12 == 0' "$W/pk.queries" >"$W/pk.exact"
fi
for r in $(seq "$ROUNDS"); do
  for t in BEFORE AFTER; do
    echo "lookup $t round $r: $("$W/typo_bench.$t" --artifact "$W/$t.art" \
      --content-hash "$(jq -r .contentHash "$W/$t.json")" --exact "$W/pk.exact" \
      --typo "$W/pk.typo" --rounds 3)"
  done
done
