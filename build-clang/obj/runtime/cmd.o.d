build-clang/obj/runtime/cmd.o: src/runtime/cmd.c src/cli/cli.h \
  src/common/args.h src/edge/edge.h src/store/store.h src/common/error.h \
  src/common/fds.h src/common/util.h src/http/mhd/metrics_http.h \
  src/http/mhd/http.h src/common/buf.h src/http/common/forwarded.h \
  src/http/common/request_id.h src/runtime/runtime.h src/state/state.h

src/cli/cli.h:

src/common/args.h:

src/edge/edge.h:

src/store/store.h:

src/common/error.h:

src/common/fds.h:

src/common/util.h:

src/http/mhd/metrics_http.h:

src/http/mhd/http.h:

src/common/buf.h:

src/http/common/forwarded.h:

src/http/common/request_id.h:

src/runtime/runtime.h:

src/state/state.h:
