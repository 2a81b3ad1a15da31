#!/usr/bin/env bash
# Builds bench/lookup and measures compile and lookup on the datasets of scripts/datasets.sh.
#   bench/lookup.sh [cities|packages-1m|packages]   (default: cities)
set -euo pipefail
cd "$(dirname "$0")/.."
set_name=${1:-cities}
make --no-print-directory -s build/suggestd build/libsuggestd.a
scripts/datasets.sh
mkdir -p bench/work
cc -std=c17 -D_GNU_SOURCE -O2 -Isrc $(pkg-config --cflags jansson libutf8proc) bench/lookup.c \
  build/libsuggestd.a $(pkg-config --libs jansson libutf8proc libsodium libcrypto) -o bench/work/lookup
/usr/bin/time -f '{"compileSeconds":%e,"peakRssKb":%M}' build/suggestd compile \
  --input ".cache/datasets/$set_name.jsonl" --output "bench/work/$set_name.art"
bench/work/lookup "bench/work/$set_name.art" ".cache/datasets/$set_name.jsonl" 2000
