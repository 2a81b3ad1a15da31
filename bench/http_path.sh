#!/usr/bin/env bash
# The runtime's request path on the repeating city mix, outside `make bench`:
#
#   bench/http_path.sh same  ARTIFACT QUERIES BINARY_A BINARY_B
#   bench/http_path.sh insns ARTIFACT QUERIES N BINARY [BINARY ...]
#
# ARTIFACT, QUERIES: as for bench/http_mix.sh (a compiled cities artifact; the prefixes
# of query_bench --queries-out), served from one hand-built edge directory as
# bench/http_mix.sh builds it (default typo policy).
# - same: runs `suggestd runtime --threads 2 --quiet` of each binary in turn and asks each
#   on one keep-alive connection, for every path of the mix (the first 3,000 prefixes,
#   every typo query of QUERIES' sibling .typo file when present, and error cases): GET
#   twice (the second from the answer cache), GET with If-None-Match of the ETag and an
#   X-Request-Id, HEAD with an Origin. Status lines, headers and bodies are compared byte
#   for byte, with Date, x-request-id and the random requestId of error bodies masked.
#   Exits 1 on any difference.
# - insns: for each binary, `suggestd runtime --threads 1 --quiet` under callgrind, one
#   warm pass of the 3,000 paths on one keep-alive connection, then N more requests
#   counted; prints instructions per request (the whole process: the worker's loop,
#   parsing, the answer, the kernel excluded).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 5 ] || { sed -n '2,20p' "$0" >&2; exit 2; }
MODE=$1 ART=$2 QUERIES=$3
shift 3
W=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$W"
}
trap cleanup EXIT
. bench/bench_edge.sh
bench_edge "$W/data/edge" "$ART"

typo=${QUERIES%.queries}.typo
python3 - "$QUERIES" "$typo" "$PK" "$W" <<'PY'
import os, sys, urllib.parse
queries, typo, key, w = sys.argv[1:5]
path = lambda q: f"/v1/query?key={key}&q={urllib.parse.quote(q, safe='')}\n"
read = lambda f: [l for l in open(f, encoding="utf-8").read().split("\n") if l]
qs = read(queries)
with open(f"{w}/repeat", "w") as f:
    f.writelines(path(q) for q in qs[:3000])
extra = [f"/v1/query?key={key}&q=par&limit={n}\n" for n in ("1", "3", "0", "11", "x")]
extra += [f"/v1/query?key={key}&q=par&locale=fr\n", f"/v1/query?key={key}&q=\n",
          f"/v1/query?key={key}\n", "/v1/query?key=wrong&q=par\n", "/v1/query?q=par\n",
          f"/v1/query?key={key}&q=%FF\n", f"/v1/query?key={key}&q=%zz\n",
          f"/v1/query?key={key}&q=" + "a" * 300 + "\n", f"/v1/query?key={key}&q=Rio+de+J\n",
          f"/v1/query?key={key}&q=par&within=itm_x\n", f"/v1/bootstrap?key={key}\n",
          "/healthz\n", "/nope\n"]
with open(f"{w}/all", "w") as f:
    f.writelines(path(q) for q in qs[:3000])
    if os.path.exists(typo):
        f.writelines(path(q) for q in read(typo))
    f.writelines(extra)
PY

cat >"$W/client.py" <<'PY'
# client.py PORT PATHS OUT N: see the header of bench/http_path.sh (OUT "-": no output,
# N > 0: only N requests cycled through PATHS, one GET each).
import re, socket, sys
port, pf, out, n = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
paths = [l.strip() for l in open(pf) if l.strip()]
s = socket.create_connection(("127.0.0.1", port))
buf = b""
def ask(req, head=False):
    global buf
    s.sendall(req)
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        if not d: sys.exit("connection closed")
        buf += d
    h, rest = buf.split(b"\r\n\r\n", 1)
    lines = h.split(b"\r\n")
    cl = 0
    for l in lines:
        if l.lower().startswith(b"content-length:"): cl = int(l.split(b":")[1])
    if head: cl = 0
    while len(rest) < cl: rest += s.recv(65536)
    body, buf = rest[:cl], rest[cl:]
    lines = [l.split(b":")[0] + b": *" if l.lower().startswith((b"date:", b"x-request-id:"))
             else l for l in lines]
    if body.startswith(b'{"code"'):
        body = re.sub(rb'"requestId":"req_[0-9a-f]{32}"', b'"requestId":"*"', body)
    return b"\r\n".join(lines) + b"\r\n\r\n" + body + b"\n"
get = lambda p, extra=b"": b"GET " + p.encode() + b" HTTP/1.1\r\nHost: x\r\n" + extra + b"\r\n"
if n > 0:
    for i in range(n): ask(get(paths[i % len(paths)]))
    sys.exit(0)
with open(out, "wb") as f:
    for p in paths:
        a = ask(get(p)); f.write(a); f.write(ask(get(p)))
        m = re.search(rb"\r\nETag: ([^\r]*)", a)
        if m:
            f.write(ask(get(p, b"If-None-Match: " + m.group(1) + b"\r\nX-Request-Id: r-1\r\n")))
        f.write(ask(b"HEAD " + p.encode() + b" HTTP/1.1\r\nHost: x\r\nOrigin: https://o.test\r\n\r\n",
                    head=True))
PY

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ready() {
  for _ in $(seq 600); do
    curl -s "http://127.0.0.1:$1/v1/query?key=$PK&q=par" | grep -q itemId && return 0
    sleep 0.1
  done
  echo "runtime on port $1 did not answer" >&2
  return 1
}
stop_last() { kill "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null || true; unset 'PIDS[-1]'; }

case $MODE in
same)
  [ $# -eq 2 ] || { sed -n '2,20p' "$0" >&2; exit 2; }
  i=0
  for bin in "$@"; do
    i=$((i + 1)) port=$(free_port)
    "$bin" runtime --data-dir "$W/data" --runtime-listen "127.0.0.1:$port" --threads 2 --quiet \
      --state-dir "$W/state-$i" 2>"$W/log-$i" &
    PIDS+=("$!")
    ready "$port"
    python3 "$W/client.py" "$port" "$W/all" "$W/out-$i" 0
    stop_last
  done
  echo "$(wc -l <"$W/all") paths, $(wc -c <"$W/out-1") bytes of answers"
  if cmp -s "$W/out-1" "$W/out-2"; then
    echo "same: $(sha256sum <"$W/out-1" | cut -c1-16)"
  else
    diff <(cat "$W/out-1") <(cat "$W/out-2") | head -20
    echo "DIFFERENT"
    exit 1
  fi
  ;;
insns)
  N=$1
  shift
  for bin in "$@"; do
    port=$(free_port) out=$W/cg.$(basename "$bin").$port
    valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" runtime --data-dir "$W/data" \
      --runtime-listen "127.0.0.1:$port" --threads 1 --quiet --state-dir "$W/state-cg" \
      2>"$W/cg.log" &
    PIDS+=("$!")
    ready "$port"
    python3 "$W/client.py" "$port" "$W/repeat" - 3000
    callgrind_control -z "${PIDS[-1]}" >/dev/null 2>&1
    python3 "$W/client.py" "$port" "$W/repeat" - "$N"
    callgrind_control -d "${PIDS[-1]}" >/dev/null 2>&1
    stop_last
    total=$(sed -n 's/^summary: //p' "$out".1)
    echo "$bin: $((total / N)) instructions per request ($N requests)"
  done
  ;;
*)
  sed -n '2,20p' "$0" >&2
  exit 2
  ;;
esac
