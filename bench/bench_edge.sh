# Sourced by bench/http_mix.sh, bench/http_path.sh and bench/http_cpu.sh: a hand-built
# edge directory that serves one artifact as a public list (default typo policy) to the
# publishable key $PK, and the nginx `return 200` they compare the runtime with.
#
#   bench_edge EDGE_DIR ARTIFACT
#   nginx_conf DIR WORKERS RETURN_PORT WWW [STATIC_PORT]
#   bench_nginx DIR PORT      (sets NGINX_PID)
#
# The records are those the control plane writes (docs/EDGE.md), each written atomically
# with REVISION bumped after it.
PK=pk_bench_public_0123456789abcdef
bench_edge() {
  local E=$1 ART=$2 h k
  for k in artifacts lists keys apps workspaces subscriptions signing-keys; do mkdir -p "$E/$k"; done
  put() {
    printf '%s' "$2" >"$1.tmp" && mv "$1.tmp" "$1"
    local rev
    rev=$(cat "$E/REVISION" 2>/dev/null || echo 0)
    printf '%s\n' $((rev + 1)) >"$E/REVISION.tmp" && mv "$E/REVISION.tmp" "$E/REVISION"
  }
  h=$(sha256sum "$ART" | cut -d' ' -f1)
  cp "$ART" "$E/artifacts/$h.sga"
  put "$E/workspaces/wsp_bench.json" '{"id":"wsp_bench","status":"active"}'
  put "$E/apps/app_bench.json" \
    '{"id":"app_bench","workspaceId":"wsp_bench","status":"active","monthlyQuota":null}'
  put "$E/lists/lst_bench.json" "{\"id\":\"lst_bench\",\"workspaceId\":\"wsp_bench\",\
\"visibility\":\"public\",\"status\":\"active\",\"queryPolicy\":{\"minQueryChars\":1,\
\"debounceMs\":150},\"localePolicy\":{\"defaultLocale\":\"en\",\"supportedLocales\":[\"en\"]},\
\"activeVersionNumber\":1,\"activeContentHash\":\"sha256:$h\"}"
  put "$E/keys/$(printf '%s' "$PK" | sha256sum | cut -d' ' -f1).json" \
    '{"id":"pk_bench","applicationId":"app_bench","listId":"lst_bench","status":"active","origins":[]}'
}

# nginx_conf DIR WORKERS RETURN_PORT WWW [STATIC_PORT]: the config of an nginx of its own
# under DIR (access log off, keep-alive without limit) that answers WWW/body.json with
# `return 200` on RETURN_PORT and, if given, as a static file on STATIC_PORT.
nginx_conf() {
  local dir=$1 workers=$2 rport=$3 www=$4 fport=${5:-}
  mkdir -p "$dir/tmp"
  {
    cat <<EOF
worker_processes $workers;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
daemon off;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $dir/tmp; proxy_temp_path $dir/tmp; fastcgi_temp_path $dir/tmp;
  uwsgi_temp_path $dir/tmp; scgi_temp_path $dir/tmp;
  keepalive_requests 100000000;
  keepalive_timeout 60s;
  default_type application/json;
  server {
    listen 127.0.0.1:$rport;
    location / { return 200 "$(cat "$www/body.json")"; }
  }
EOF
    [ -z "$fport" ] || cat <<EOF
  server {
    listen 127.0.0.1:$fport;
    root $www;
    location / { rewrite ^ /body.json break; }
  }
EOF
    echo "}"
  } >"$dir/nginx.conf"
}

# An nginx of its own under DIR, started in the background: 2 workers, `return 200` of a
# 1,057-byte body (the size of a city answer) on 127.0.0.1:PORT. Its pid (the master's) in
# NGINX_PID.
bench_nginx() {
  local dir=$1 port=$2
  mkdir -p "$dir/www"
  head -c 1057 /dev/zero | tr '\0' 'a' >"$dir/www/body.json"
  nginx_conf "$dir" 2 "$port" "$dir/www"
  "$(command -v nginx || echo /usr/sbin/nginx)" -c "$dir/nginx.conf" -p "$dir" &
  NGINX_PID=$!
}
