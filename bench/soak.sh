#!/usr/bin/env bash
# `make soak`: SOAK_SECONDS (default 300) of queries, a publish every second and selection
# reports against a real `suggestd serve`; prints its figures and fails on any error, on
# descriptor growth or on RSS growth past the bound (bench/soak.py; docs/OBSERVABILITY.md).
set -euo pipefail
cd "$(dirname "$0")/.."
make --no-print-directory -s all
scripts/datasets.sh
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
exec "$PY" bench/soak.py
