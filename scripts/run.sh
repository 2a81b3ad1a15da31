#!/usr/bin/env bash
# `make run`: serves the embedded default (SQLite + local edge directory) from ./data.
# On the first run it creates a workspace, an application and a secret key, and prints
# the key once (only its digest is stored), and the dashboard's first owner
# (owner@localhost) with a random password, printed once (only its Argon2id hash is stored). Override with SUGGESTD_DATA_DIR,
# SUGGESTD_CONTROL_LISTEN, SUGGESTD_RUNTIME_LISTEN.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=build/suggestd
DATA=${SUGGESTD_DATA_DIR:-data}
CONTROL=${SUGGESTD_CONTROL_LISTEN:-127.0.0.1:8080}
RUNTIME=${SUGGESTD_RUNTIME_LISTEN:-127.0.0.1:8081}
export SUGGESTD_DATA_DIR="$DATA"

field() { /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

if [ ! -f "$DATA/suggestd.db" ]; then
  mkdir -p "$DATA"
  ws=$("$BIN" admin workspace create --name "My workspace" | field id)
  app=$("$BIN" admin application create --workspace "$ws" --name "My app" | field id)
  key=$("$BIN" admin secret-key create --application "$app" | field secretKey)
  "$BIN" admin signing-key rotate >/dev/null 2>&1 || true
  # The first owner of the dashboard: a random password, shown once; only its Argon2id
  # hash is stored. The file that hands it to the CLI is private and removed at once.
  password=$(head -c 64 /dev/urandom | base64 -w0 | tr -dc 'A-Za-z0-9')
  password=${password:0:20}
  pwfile=$(mktemp)
  printf '%s\n' "$password" > "$pwfile"
  "$BIN" admin member create --workspace "$ws" --email owner@localhost --role owner \
    --password-file "$pwfile" >/dev/null
  rm -f "$pwfile"
  cat <<MSG
──────────────────────────────────────────────────────────────────────────────
 First run: created workspace $ws and application $app.
 Your secret key (shown once, store it now):

   $key

 Dashboard: http://$CONTROL/dashboard/
   email:    owner@localhost
   password: $password      (shown once; change it in the dashboard)

MSG
  echo "$app" > "$DATA/.first-application"
fi
app=$(cat "$DATA/.first-application" 2>/dev/null || echo "<application id>")
cat <<MSG
──────────────────────────────────────────────────────────────────────────────
 suggestd: control plane http://$CONTROL/api/v1   runtime http://$RUNTIME/v1
 data dir: $DATA

 Try it:
   curl -s -X POST http://$CONTROL/api/v1/lists -H "Authorization: Bearer \$SECRET_KEY" \\
        -d '{"name":"Cities"}'
 Another secret key:     $BIN admin secret-key create --application $app --data-dir $DATA
 A publishable key:      $BIN admin publishable-key create --application $app --list <list id> --data-dir $DATA
──────────────────────────────────────────────────────────────────────────────
MSG
exec "$BIN" serve --data-dir "$DATA" --control-listen "$CONTROL" --runtime-listen "$RUNTIME"
