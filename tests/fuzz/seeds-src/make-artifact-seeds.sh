#!/usr/bin/env bash
# Rebuilds the fuzz_artifact seed corpus (tests/fuzz/corpus/artifact/*.art) from the JSONL
# inputs next to this script (tree.jsonl: a hierarchy with a subtree large enough for the
# filter's subtree index, SG__EXT_WSUB), with the suggestd binary of this tree. Run it
# whenever the artifact format changes: a seed in an old format stops at the version
# check, and the fuzzer would never reach the sections behind it.
set -euo pipefail
cd "$(dirname "$0")/../../.."
make --no-print-directory -s build/suggestd
out=tests/fuzz/corpus/artifact
for name in one andorra cities60 tree; do
  locales=en
  [ "$name" = andorra ] && locales=en,fr
  build/suggestd compile --input "tests/fuzz/seeds-src/$name.jsonl" --output "$out/$name.art" \
    --locales "$locales" >/dev/null
done
ls -l "$out"
