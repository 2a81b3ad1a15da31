#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster for tests and benchmarks: initdb in a directory of
# our own, a free port on 127.0.0.1, no systemd.
#
#   scripts/pg.sh start DIR   prints the server's URL (postgres://suggestd@127.0.0.1:PORT/postgres)
#   scripts/pg.sh start DIR tests
#                             the same with fsync=off and full_page_writes=off (see below)
#   scripts/pg.sh stop DIR    stops it (fast shutdown) and removes DIR
#   scripts/pg.sh url DIR     prints the URL of a running cluster
#   scripts/pg.sh createdb DIR NAME   creates database NAME, prints its URL
#
# PostgreSQL refuses to run as root, so as root the cluster runs as the `postgres` user
# that Debian's package creates. The installation itself is scripts/deps.sh's job.
set -euo pipefail
BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop|url|createdb DIR [NAME]" >&2; exit 2; }
[ -x "$BIN/initdb" ] || { echo "pg.sh: no PostgreSQL 15 at $BIN (run scripts/deps.sh)" >&2; exit 3; }
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
url() { echo "postgres://suggestd@127.0.0.1:$(cat "$dir/port")/${1:-postgres}"; }
free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
# The test suites' cluster (scripts/with-pg.sh) skips flushing to the disk: fsync=off and
# full_page_writes=off only matter when the operating system itself stops (power loss, a
# kernel crash): PostgreSQL still writes every commit's WAL before it answers (that is
# synchronous_commit, left on), so a PostgreSQL process killed with -9 recovers every
# committed transaction from the WAL in the OS's page cache. The tests kill suggestd
# processes and PostgreSQL backends (pg_terminate_backend), never the machine, so what
# they prove about a 2xx surviving kill -9 is unchanged; and no commit, CREATE or DROP
# DATABASE waits for the disk (with-pg.sh also puts the cluster on tmpfs). Benchmarks
# (bench/pg.sh) keep the defaults, to measure what users get.
settings="-c listen_addresses=127.0.0.1 -c max_connections=400 -c shared_buffers=256MB"
[ "${3:-}" = tests ] && settings="$settings -c fsync=off -c full_page_writes=off"
case "$cmd" in
start)
  mkdir -p "$dir"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
  as_pg "$BIN/initdb" -D "$dir/data" -U suggestd --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
  for _ in 1 2 3 4 5; do
    port=$(free_port)
    if as_pg "$BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 start \
        -o "-p $port -k $dir $settings" >/dev/null; then
      echo "$port" >"$dir/port"; url; exit 0
    fi
  done
  cat "$dir/server.log" >&2; exit 1 ;;
stop)
  [ -d "$dir/data" ] && as_pg "$BIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$dir" ;;
url) url ;;
createdb)
  name=${3:?database name}
  as_pg "$BIN/psql" -q -h 127.0.0.1 -p "$(cat "$dir/port")" -U suggestd -d postgres \
    -c "CREATE DATABASE \"$name\"" >/dev/null
  url "$name" ;;
*) echo "usage: $0 start|stop|url|createdb DIR [NAME]" >&2; exit 2 ;;
esac
