#!/usr/bin/env bash
# Tiers 3 and 4 (docs/DESIGN.md §3.3: words in any order, words run together), what they cost,
# side by side in one run (docs/PERFORMANCE.md, "Words in any order and run together"):
#
#   1. `suggestd compile` of the cities and of the 4.5M package names with and without
#      the tier 3/4 sections (`--without-words`, the reference: this same build, the
#      sections left out), alternating, ROUNDS rounds (CITY_ROUNDS for the cities), the
#      order reversed every round: wall time and artifact bytes, and their ratio (target
#      ≤ 1.25× each); bench/report.py takes the time ratio within each round and reads the
#      median of the rounds' ratios (a 1 GB write and fsync makes one compile's wall time
#      wander by ±10 %).
#   2. In-process (bench/typo_bench.c, --typos 0 --highlight 1, best of 3 rounds per
#      query) on the package names: 2,000 tier-3 queries (a name of 2-6 words, its words
#      shuffled, the last cut short) and 2,000 tier-4 queries (a name's first words run
#      together, cut to at least 4 characters) (target p99 ≤ 100 µs); and a mix that does
#      not use them (prefixes of 2,000 names, and the same with one edit, typo budget as
#      by default) against both artifacts, alternating, LOOKUP_ROUNDS rounds (default 5;
#      the order of the artifacts reverses every round, and bench/report.py takes the
#      median of the rounds' with ÷ without ratios, so one slow round cannot decide it).
#
#   3. What the typo search's speed-only sections cost (issue 23: ≤ 1.1× of what the
#      contract needs without them): the same compiles with `--without-skip-tables` (every
#      section the answers need, the skip tables left out: the typo search then takes its
#      plain walk, with the same answers), wall time and bytes; and the mix of 2. on that
#      artifact in the same rounds, whose checksum must equal the full artifact's.
#
#   bench/words.sh [OUT_JSON]     (default bench/work/words.json; ROUNDS=3, LOOKUP_ROUNDS=5)
# Called by bench/run.sh when the package names are in BENCH_SETS; runs alone too.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
W=$ROOT/bench/work/words
OUT=${1:-$ROOT/bench/work/words.json}
ROUNDS=${ROUNDS:-3}
LOOKUP_ROUNDS=${LOOKUP_ROUNDS:-5}
BIN=${BENCH_SUGGESTD:-$ROOT/build/suggestd}
mkdir -p "$W"
log() { printf 'bench/words: %s\n' "$*" >&2; }
scripts/datasets.sh
make --no-print-directory -s build/suggestd build/libsuggestd.a
cc -std=c17 -D_GNU_SOURCE -O2 -Isrc $(pkg-config --cflags jansson libutf8proc) bench/typo_bench.c \
  build/libsuggestd.a $(pkg-config --libs jansson libutf8proc libsodium libcrypto) -lm -o "$W/typo_bench"

# ---- the query mixes (deterministic) ----------------------------------------------------
python3 - .cache/datasets/packages.jsonl "$W" <<'PY'
import json, random, re, sys
path, w = sys.argv[1], sys.argv[2]
names = []
with open(path, encoding="utf-8") as f:
    for line in f:
        o = json.loads(line)
        names.append(o.get("displayValue") or o["value"])
rnd = random.Random(24)
step = max(1, len(names) // 20000)
t3, t4, pre, typo = [], [], [], []
for i in range(0, len(names), step):
    words = [x for x in re.split(r"[^0-9a-z]+", names[i].lower()) if x]
    if 2 <= len(words) <= 6 and len(t3) < 2000:
        ws = words[:]
        rnd.shuffle(ws)
        ws[-1] = ws[-1][:rnd.randint(1, len(ws[-1]))]
        t3.append(" ".join(ws))
    if len(words) >= 2 and len(t4) < 2000:
        run = "".join(words)
        if len(run) >= 4:
            t4.append(run[:rnd.randint(4, len(run))])
    if len(pre) < 2000 and len(names[i]) >= 4:
        p = names[i][:rnd.randint(4, min(len(names[i]), 16))]
        pre.append(p)
        k = rnd.randrange(1, len(p))
        typo.append(p[:k] + ("x" if p[k] != "x" else "y") + p[k + 1:])
for name, v in (("t3", t3), ("t4", t4), ("prefix", pre), ("prefix-typo", typo)):
    open(f"{w}/{name}.txt", "w", encoding="utf-8").write("".join(q.replace("\n", " ") + "\n" for q in v))
PY

# ---- 1: compile with and without the sections ---------------------------------------------
: >"$W/compile.jsonl"
# The cities compile in under a second, so a round's noise is a large share of it: they
# get CITY_ROUNDS (5) rounds, the package names ROUNDS.
CITY_ROUNDS=${CITY_ROUNDS:-5}
for r in $(seq $((ROUNDS > CITY_ROUNDS ? ROUNDS : CITY_ROUNDS))); do
  for set in cities packages; do
    [ "$set" = cities ] && [ "$r" -gt "$CITY_ROUNDS" ] && continue
    [ "$set" = packages ] && [ "$r" -gt "$ROUNDS" ] && continue
    # The order reverses every round, as in part 2: a compile that follows another's 1 GB
    # write and fsync runs slower, so no variant always takes the same place.
    order="without noskip with"
    [ $((r % 2)) = 0 ] && order="with noskip without"
    for variant in $order; do
      flag=()
      [ "$variant" = without ] && flag=(--without-words)
      [ "$variant" = noskip ] && flag=(--without-skip-tables)
      log "compile $set $variant, round $r"
      # Each starts with no other write in flight: the old output removed (replacing a
      # 1 GB file frees its blocks inside the timed rename) and the page cache synced.
      rm -f "$W/$set.$variant.art"
      sync
      /usr/bin/time -f '%e %M' -o "$W/time" "$BIN" compile --input ".cache/datasets/$set.jsonl" \
        --output "$W/$set.$variant.art" "${flag[@]}" >"$W/$set.$variant.json"
      read -r secs rss <"$W/time"
      jq -c --arg s "$set" --arg v "$variant" --argjson r "$r" --argjson t "$secs" --argjson m "$rss" \
        '{set: $s, variant: $v, round: $r, seconds: $t, peakRssKb: $m, bytes, contentHash}' \
        "$W/$set.$variant.json" >>"$W/compile.jsonl"
    done
  done
done

# ---- 2: queries ------------------------------------------------------------------------------
hash() { jq -r .contentHash "$W/packages.$1.json"; }
: >"$W/lookup.jsonl"
log "tier 3 and tier 4 mixes"
"$W/typo_bench" --artifact "$W/packages.with.art" --content-hash "$(hash with)" --exact "$W/t3.txt" \
  --typo "$W/t4.txt" --rounds 3 --highlight 1 --typos 0 |
  jq -c '{mix: "words", variant: "with"} + .' >>"$W/lookup.jsonl"
for r in $(seq "$LOOKUP_ROUNDS"); do
  order="without noskip with"
  [ $((r % 2)) -eq 0 ] && order="with noskip without"
  for variant in $order; do
    log "unaffected mix, $variant, round $r/$LOOKUP_ROUNDS"
    "$W/typo_bench" --artifact "$W/packages.$variant.art" --content-hash "$(hash "$variant")" \
      --exact "$W/prefix.txt" --typo "$W/prefix-typo.txt" --rounds 3 --highlight 1 |
      jq -c --arg v "$variant" --argjson r "$r" '{mix: "prefix", variant: $v, round: $r} + .' \
        >>"$W/lookup.jsonl"
  done
done
jq -s --slurpfile c "$W/compile.jsonl" '{rounds: '"$ROUNDS"', cityRounds: '"$CITY_ROUNDS"', lookupRounds: '"$LOOKUP_ROUNDS"', compile: $c, lookup: .}' \
  "$W/lookup.jsonl" >"$OUT"
rm -f "$W"/*.art
log "wrote $OUT"
