build-clang/suggestd: src/main.c src/cli/cli.h src/common/args.h \
  src/edge/edge.h src/store/store.h src/common/error.h \
  src/client/client.h src/common/util.h src/common/version.h \
  src/control/control.h src/http/mhd/http.h src/common/buf.h \
  src/http/common/forwarded.h src/http/common/request_id.h \
  src/compiler/cli.h src/runtime/runtime.h

src/cli/cli.h:

src/common/args.h:

src/edge/edge.h:

src/store/store.h:

src/common/error.h:

src/client/client.h:

src/common/util.h:

src/common/version.h:

src/control/control.h:

src/http/mhd/http.h:

src/common/buf.h:

src/http/common/forwarded.h:

src/http/common/request_id.h:

src/compiler/cli.h:

src/runtime/runtime.h:
