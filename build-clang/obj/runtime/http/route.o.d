build-clang/obj/runtime/http/route.o: src/runtime/http/route.c \
  src/common/metrics.h src/common/buf.h src/http/common/health.h \
  src/http/common/percent.h src/common/error.h \
  src/http/common/request_id.h src/runtime/server.h \
  src/runtime/http/http1.h src/http/common/forwarded.h src/runtime/rt.h \
  src/common/ratelimit.h src/compiler/typo.h src/edge/edge.h \
  src/runtime/runtime.h src/state/state.h src/search/artifact.h \
  src/compiler/compiler.h

src/common/metrics.h:

src/common/buf.h:

src/http/common/health.h:

src/http/common/percent.h:

src/common/error.h:

src/http/common/request_id.h:

src/runtime/server.h:

src/runtime/http/http1.h:

src/http/common/forwarded.h:

src/runtime/rt.h:

src/common/ratelimit.h:

src/compiler/typo.h:

src/edge/edge.h:

src/runtime/runtime.h:

src/state/state.h:

src/search/artifact.h:

src/compiler/compiler.h:
