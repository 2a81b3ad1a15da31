build-clang/obj/cli/serve.o: src/cli/serve.c src/cli/cli.h \
  src/common/args.h src/edge/edge.h src/store/store.h src/common/error.h \
  src/common/fds.h src/common/util.h src/control/control.h \
  src/http/mhd/http.h src/common/buf.h src/http/common/forwarded.h \
  src/http/common/request_id.h src/dashboard/dashboard.h \
  src/control/internal.h src/control/edge_guard.h src/common/ratelimit.h \
  src/control/edge_sync.h src/http/common/listen.h \
  src/http/mhd/metrics_http.h src/runtime/runtime.h src/state/state.h

src/cli/cli.h:

src/common/args.h:

src/edge/edge.h:

src/store/store.h:

src/common/error.h:

src/common/fds.h:

src/common/util.h:

src/control/control.h:

src/http/mhd/http.h:

src/common/buf.h:

src/http/common/forwarded.h:

src/http/common/request_id.h:

src/dashboard/dashboard.h:

src/control/internal.h:

src/control/edge_guard.h:

src/common/ratelimit.h:

src/control/edge_sync.h:

src/http/common/listen.h:

src/http/mhd/metrics_http.h:

src/runtime/runtime.h:

src/state/state.h:
