#!/bin/sh
# What one edge change costs the runtime's loader, before and after: builds
# bench/edge_change.c against this tree and, given BASE=<a git worktree of an older
# commit with its build/libsuggestd.a built>, against that one too, then runs them
# alternately on the same directory edge (filled once) and prints their JSON lines.
#   bench/edge_change.sh [N=20000] [ROUNDS=30] [PAIRS=3]
set -eu
N=${1:-20000}
ROUNDS=${2:-30}
PAIRS=${3:-3}
W=$(mktemp -d /tmp/sg-edge-change-bench-XXXXXX)
trap 'rm -rf "$W"' EXIT
LIBS="$(pkg-config --libs libmicrohttpd jansson sqlite3 libpq hiredis libsodium libcrypto libutf8proc libcurl) -lhttp_parser -lpthread -lm"
CF="-std=c17 -D_GNU_SOURCE -O2 $(pkg-config --cflags jansson libutf8proc)"
# shellcheck disable=SC2086
cc $CF -Isrc bench/edge_change.c build/libsuggestd.a $LIBS -o "$W/after"
if [ -n "${BASE:-}" ]; then
  # shellcheck disable=SC2086
  cc $CF -I"$BASE/src" bench/edge_change.c "$BASE/build/libsuggestd.a" $LIBS -o "$W/before"
fi
"$W/after" "$W/edge" "$N" 1 >/dev/null # fills the edge
i=0
while [ "$i" -lt "$PAIRS" ]; do
  [ -n "${BASE:-}" ] && printf '{"build":"before",%s\n' "$("$W/before" "$W/edge" "$N" "$ROUNDS" | cut -c2-)"
  printf '{"build":"after",%s\n' "$("$W/after" "$W/edge" "$N" "$ROUNDS" | cut -c2-)"
  printf '{"build":"after-full",%s\n' "$("$W/after" "$W/edge" "$N" "$ROUNDS" full | cut -c2-)"
  [ -n "${BASE:-}" ] && printf '{"build":"before-workspace",%s\n' "$("$W/before" "$W/edge" "$N" "$ROUNDS" workspace | cut -c2-)"
  printf '{"build":"after-workspace",%s\n' "$("$W/after" "$W/edge" "$N" "$ROUNDS" workspace | cut -c2-)"
  i=$((i + 1))
done
