build-clang/obj/runtime/h_ready.o: src/runtime/h_ready.c \
  src/common/metrics.h src/common/buf.h src/common/util.h \
  src/http/common/health.h src/runtime/rt.h src/common/error.h \
  src/common/ratelimit.h src/compiler/typo.h src/edge/edge.h \
  src/http/common/request_id.h src/runtime/http/http1.h \
  src/http/common/forwarded.h src/runtime/runtime.h src/state/state.h \
  src/search/artifact.h src/compiler/compiler.h src/runtime/server.h

src/common/metrics.h:

src/common/buf.h:

src/common/util.h:

src/http/common/health.h:

src/runtime/rt.h:

src/common/error.h:

src/common/ratelimit.h:

src/compiler/typo.h:

src/edge/edge.h:

src/http/common/request_id.h:

src/runtime/http/http1.h:

src/http/common/forwarded.h:

src/runtime/runtime.h:

src/state/state.h:

src/search/artifact.h:

src/compiler/compiler.h:

src/runtime/server.h:
