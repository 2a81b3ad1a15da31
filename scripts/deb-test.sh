#!/usr/bin/env bash
# `make deb-test` (part of `make test`): builds the Debian package (scripts/deb.sh, lintian
# clean), installs it with dpkg -i, starts suggestd.service's ExecStart command line as
# the suggestd user with /etc/suggestd/suggestd.env (systemd does not run in CI
# containers, so the unit is started by hand the way systemd would: its user, its
# environment file, its command), uses it through the installed binary and curl, stops it,
# removes the package (the data stays) and purges it (the user, the data and the
# configuration go).
#
# It installs a package system-wide, so it needs root; without root it says so and
# skips, except under CI=true where it fails. It refuses to run over an installed
# suggestd package it did not install.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  if [ "${CI:-}" = "true" ]; then echo "deb-test: needs root" >&2; exit 1; fi
  echo "deb-test: skipped (needs root to install a package)" >&2
  exit 0
fi
if dpkg-query -W -f='${Status}' suggestd 2>/dev/null | grep -q 'installed\|config-files'; then
  echo "deb-test: a suggestd package is already installed; remove it first (dpkg --purge suggestd)" >&2
  exit 1
fi
if getent passwd suggestd >/dev/null; then
  echo "deb-test: a suggestd user already exists; this test checks the package creates it" >&2
  exit 1
fi

scripts/deb.sh
DEB=$(ls -t build/deb/suggestd_*.deb | head -1)
pid=""
installed=0
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  [ "$installed" = 1 ] && dpkg --purge suggestd >/dev/null 2>&1 || true
}
trap cleanup EXIT
fail() { echo "deb-test: FAIL: $*" >&2; [ -f "${log:-}" ] && tail -20 "$log" >&2; exit 1; }
field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

dpkg -i "$DEB" >/dev/null
installed=1
getent passwd suggestd >/dev/null || fail "postinst created no suggestd user"
[ "$(stat -c %U:%G:%a /var/lib/suggestd)" = "suggestd:suggestd:750" ] ||
  fail "/var/lib/suggestd is $(stat -c %U:%G:%a /var/lib/suggestd)"
[ -f /etc/suggestd/suggestd.env ] || fail "no /etc/suggestd/suggestd.env"
for u in suggestd suggestd-control suggestd-runtime; do
  [ -f "/lib/systemd/system/$u.service" ] || fail "no $u.service"
done
# The units parse, and their sandbox stays tight (systemd's own exposure score, 0 to 10).
if command -v systemd-analyze >/dev/null; then
  for u in suggestd suggestd-control suggestd-runtime; do
    systemd-analyze verify --man=no "/lib/systemd/system/$u.service" || fail "$u.service does not verify"
    systemd-analyze security --offline=true --threshold=20 "/lib/systemd/system/$u.service" \
      >/dev/null || fail "$u.service: exposure above 2.0 (systemd-analyze security)"
  done
fi
[ -f /usr/share/man/man1/suggestd-serve.1.gz ] || fail "no man page"
zcat /usr/share/man/man1/suggestd-serve.1.gz | grep -qF 'control\-listen' ||
  fail "suggestd-serve(1) does not name --control-listen"

# The unit's command and user, as systemd would run them.
exec_start=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/suggestd.service)
[ "$(sed -n 's/^User=//p' /lib/systemd/system/suggestd.service)" = suggestd ] || fail "unit user"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
CTL=127.0.0.1:$(free_port) RT=127.0.0.1:$(free_port) MET=127.0.0.1:$(free_port)
# Runs "$@" as the suggestd user with the environment file, then this test's free ports in
# place of its defaults. Called in a subshell: the exec replaces it, so a background
# call's $! is the server itself.
as_suggestd_exec() {
  set -a; . /etc/suggestd/suggestd.env; set +a
  export SUGGESTD_CONTROL_LISTEN=$CTL SUGGESTD_RUNTIME_LISTEN=$RT SUGGESTD_METRICS_LISTEN=$MET
  cd / && exec setpriv --reuid suggestd --regid suggestd --init-groups --no-new-privs -- "$@"
}
as_suggestd() { (as_suggestd_exec "$@"); }
log=$(mktemp)
# shellcheck disable=SC2086 # ExecStart is a command line: word splitting is the point.
as_suggestd_exec $exec_start >"$log" 2>&1 &
pid=$!
for _ in $(seq 100); do
  curl -sf "http://$RT/readyz" >/dev/null 2>&1 && curl -sf "http://$CTL/readyz" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || fail "the service exited"
  sleep 0.1
done
for u in "http://$CTL/healthz" "http://$CTL/readyz" "http://$RT/healthz" "http://$RT/readyz" "http://$MET/metrics"; do
  curl -sf "$u" >/dev/null || fail "$u does not answer 200"
done
[ "$(stat -c %U /var/lib/suggestd/suggestd.db)" = suggestd ] || fail "the store is not the suggestd user's"

# An operator's first steps through the installed binary, as the service's user.
ws=$(as_suggestd /usr/bin/suggestd admin workspace create --name Acme | field id)
app=$(as_suggestd /usr/bin/suggestd admin application create --workspace "$ws" --name Web | field id)
sk=$(as_suggestd /usr/bin/suggestd admin secret-key create --application "$app" | field secretKey)
as_suggestd /usr/bin/suggestd admin workspace list | grep -q "$ws" || fail "admin workspace list misses $ws"
CP="http://$CTL"
list=$(curl -sf -X POST "$CP/api/v1/lists" -H "Authorization: Bearer $sk" -d '{"name":"Cities"}' | field id)
curl -sf -o /dev/null -X POST "$CP/api/v1/lists/$list/items" -H "Authorization: Bearer $sk" \
  -d '{"value":"Paris","rank":10}'
curl -sf -o /dev/null -X PATCH "$CP/api/v1/lists/$list" -H "Authorization: Bearer $sk" -d '{"visibility":"public"}'
curl -sf -o /dev/null -X POST "$CP/api/v1/lists/$list/versions" -H "Authorization: Bearer $sk"
pk=$(as_suggestd /usr/bin/suggestd admin publishable-key create --application "$app" --list "$list" | field publishableKey)
answer=""
for _ in $(seq 50); do
  answer=$(curl -s "http://$RT/v1/query?key=$pk&q=par" || true)
  case "$answer" in *'"Paris"'*) break ;; esac
  sleep 0.1
done
case "$answer" in *'"Paris"'*) ;; *) fail "/v1/query answered: $answer" ;; esac

[ "$(ps -o user= -p "$pid")" = suggestd ] || fail "the service does not run as suggestd"
kill "$pid"
wait "$pid" 2>/dev/null || true
pid=""

dpkg -r suggestd >/dev/null
[ ! -e /usr/bin/suggestd ] || fail "dpkg -r left /usr/bin/suggestd"
getent passwd suggestd >/dev/null || fail "dpkg -r removed the user (only a purge does)"
[ -f /var/lib/suggestd/suggestd.db ] || fail "dpkg -r removed the data (only a purge does)"
dpkg --purge suggestd >/dev/null
installed=0
! getent passwd suggestd >/dev/null || fail "the purge left the suggestd user"
! getent group suggestd >/dev/null || fail "the purge left the suggestd group"
[ ! -e /var/lib/suggestd ] || fail "the purge left /var/lib/suggestd"
[ ! -e /etc/suggestd ] || fail "the purge left /etc/suggestd"
[ ! -e /lib/systemd/system/suggestd.service ] || fail "the purge left the units"
rm -f "$log"
echo "deb-test: installed, served /v1/query as the suggestd user, removed and purged cleanly"
