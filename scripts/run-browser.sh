#!/usr/bin/env bash
# Runs the node tests of tests/node against the real build/suggestd: the JS client
# (client.test.mjs), its TypeScript types (types.test.mjs), and the widget in Debian's
# headless Chromium (browser.test.mjs, driven by puppeteer-core), and the dashboard pages
# through each role's journeys (dashboard.test.mjs) and the later pages, preview and
# session security (dashboard-pages.test.mjs), and the sign-in form's workspace choice
# (dashboard-workspaces.test.mjs), and the synonyms editor
# (dashboard-synonyms.test.mjs), and the example page's box filtered by ancestor
# (browser-within.test.mjs). Outside CI a missing
# Chromium skips the browser tests with a message; under CI=true they must run
# (browser.test.mjs fails without Chromium).
set -euo pipefail
cd "$(dirname "$0")/../tests/node"
if [ "${CI:-}" != "true" ] && ! [ -x /usr/bin/chromium ] && [ -z "${CHROMIUM:-}" ]; then
  echo "browser tests will be SKIPPED: no /usr/bin/chromium (scripts/deps.sh installs it)" >&2
fi
exec node --test client.test.mjs types.test.mjs browser.test.mjs byow.test.mjs dashboard.test.mjs \
  dashboard-pages.test.mjs dashboard-analytics.test.mjs dashboard-workspaces.test.mjs \
  dashboard-synonyms.test.mjs browser-within.test.mjs "$@"
