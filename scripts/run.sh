#!/usr/bin/env bash
# `make run`: serves the embedded default (SQLite + local edge directory) from ./data.
# On the first run it creates a workspace, an application and a secret key, and prints
# the key once (only its digest is stored), and the dashboard's first owner
# (owner@localhost) with a random password, printed once (only its Argon2id hash is
# stored). Override with SUGGESTD_DATA_DIR, SUGGESTD_CONTROL_LISTEN,
# SUGGESTD_RUNTIME_LISTEN, SUGGESTD_METRICS_LISTEN.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=build/suggestd
DATA=${SUGGESTD_DATA_DIR:-data}
CONTROL=${SUGGESTD_CONTROL_LISTEN:-127.0.0.1:8080}
RUNTIME=${SUGGESTD_RUNTIME_LISTEN:-127.0.0.1:8081}
METRICS=${SUGGESTD_METRICS_LISTEN:-127.0.0.1:9464}
export SUGGESTD_DATA_DIR="$DATA"

field() { /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

# A port already taken (often a `make run` still running elsewhere) would only fail deep
# inside the server; say so plainly, with the command that picks other ports.
busy() {
  local host=${1%:*} port=${1##*:}
  host=${host#[}; host=${host%]}; [ -n "$host" ] || host=127.0.0.1
  (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null
}
for pair in "control plane:$CONTROL" "runtime:$RUNTIME" "metrics:$METRICS"; do
  what=${pair%%:*} addr=${pair#*:}
  if busy "$addr"; then
    cat >&2 <<MSG
make run: $addr (the $what) is already in use — is another \`make run\` or suggestd running?
Stop it, or pick free ports, for example:

  SUGGESTD_CONTROL_LISTEN=127.0.0.1:9080 SUGGESTD_RUNTIME_LISTEN=127.0.0.1:9081 \\
    SUGGESTD_METRICS_LISTEN=127.0.0.1:9465 make run
MSG
    exit 1
  fi
done

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
           metrics http://$METRICS/metrics   readiness http://$RUNTIME/readyz
 data dir: $DATA

 Try it: the walk-through in README.md ("A walk-through") runs as written.
 Another secret key:     $BIN admin secret-key create --application $app --data-dir $DATA
 A publishable key:      $BIN admin publishable-key create --application $app --list <list id> --data-dir $DATA
 In a browser:           serve the repository (python3 -m http.server 8000) and open
   http://127.0.0.1:8000/examples/browser/index.html?runtime=http://$RUNTIME&key=<publishable key>
 Other ports or data dir: SUGGESTD_CONTROL_LISTEN=127.0.0.1:9080 SUGGESTD_RUNTIME_LISTEN=127.0.0.1:9081 \\
                          SUGGESTD_METRICS_LISTEN=127.0.0.1:9465 SUGGESTD_DATA_DIR=data2 make run
──────────────────────────────────────────────────────────────────────────────
MSG
exec "$BIN" serve --data-dir "$DATA" --control-listen "$CONTROL" --runtime-listen "$RUNTIME" \
  --metrics-listen "$METRICS"
