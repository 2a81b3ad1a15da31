# Sourced by bench/http_mix.sh and bench/http_path.sh: a hand-built edge directory that
# serves one artifact as a public list (default typo policy) to the publishable key $PK.
#
#   bench_edge EDGE_DIR ARTIFACT
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
