build-clang/obj/runtime/token.o: src/runtime/token.c src/common/bearer.h \
  src/common/jwt.h src/runtime/rt.h src/common/buf.h src/common/error.h \
  src/common/ratelimit.h src/compiler/typo.h src/edge/edge.h \
  src/http/common/request_id.h src/runtime/http/http1.h \
  src/http/common/forwarded.h src/runtime/runtime.h src/state/state.h \
  src/search/artifact.h src/compiler/compiler.h

src/common/bearer.h:

src/common/jwt.h:

src/runtime/rt.h:

src/common/buf.h:

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
