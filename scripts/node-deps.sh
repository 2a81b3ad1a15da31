#!/usr/bin/env bash
# Installs the node dev tools of the browser, types and OpenAPI tests
# (tests/node/package.json: puppeteer-core, an OpenAPI 3.1 validator, ajv, yaml,
# typescript) exactly as package-lock.json pins them. puppeteer-core never downloads a
# browser: the tests drive Debian's chromium. Quiet and fast when node_modules already
# matches the lock.
set -euo pipefail
cd "$(dirname "$0")/../tests/node"
stamp=node_modules/.suggestd-lock
if [ -f "$stamp" ] && cmp -s package-lock.json "$stamp"; then exit 0; fi
echo "node-deps: npm ci in tests/node" >&2
PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >&2
cp package-lock.json "$stamp"
