build-clang/obj/runtime/loader.o: src/runtime/loader.c src/common/util.h \
  src/common/version.h src/runtime/server.h src/runtime/http/http1.h \
  src/http/common/forwarded.h src/common/buf.h src/common/error.h \
  src/runtime/rt.h src/common/ratelimit.h src/compiler/typo.h \
  src/edge/edge.h src/http/common/request_id.h src/runtime/runtime.h \
  src/state/state.h src/search/artifact.h src/compiler/compiler.h

src/common/util.h:

src/common/version.h:

src/runtime/server.h:

src/runtime/http/http1.h:

src/http/common/forwarded.h:

src/common/buf.h:

src/common/error.h:

src/runtime/rt.h:

src/common/ratelimit.h:

src/compiler/typo.h:

src/edge/edge.h:

src/http/common/request_id.h:

src/runtime/runtime.h:

src/state/state.h:

src/search/artifact.h:

src/compiler/compiler.h:
