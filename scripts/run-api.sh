#!/usr/bin/env bash
# Runs the black-box API tests (pytest, Debian's python3-pytest) against build/suggestd.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
exec "$PY" -m pytest -q -p no:cacheprovider tests/api "$@"
