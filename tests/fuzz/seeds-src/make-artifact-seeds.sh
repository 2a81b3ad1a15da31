#!/usr/bin/env bash
# Rebuilds the current-format seeds of the fuzz_artifact corpus (tests/fuzz/corpus/artifact:
# cities60-v6.art and tree.art) from the JSONL inputs next to this script (tree.jsonl: a
# hierarchy with a subtree large enough for the filter's subtree index, SG__EXT_WSUB), with
# the suggestd binary of this tree. Run it whenever the artifact format changes: a seed in
# an old format stops at the version check, and the fuzzer would never reach the sections
# behind it. one.art, andorra.art and cities60.art are the previous release's format (5),
# written by 0.2.0 from the same inputs; they stay as they are, since the reader opens that
# format too (tests/unit/search/test_artifact.c reads andorra.art as such). Replace them
# with the previous release's binary when that format changes.
set -euo pipefail
cd "$(dirname "$0")/../../.."
make --no-print-directory -s build/suggestd
out=tests/fuzz/corpus/artifact
build/suggestd compile --input tests/fuzz/seeds-src/cities60.jsonl --output "$out/cities60-v6.art" \
  --locales en >/dev/null
build/suggestd compile --input tests/fuzz/seeds-src/tree.jsonl --output "$out/tree.art" \
  --locales en >/dev/null
ls -l "$out"
