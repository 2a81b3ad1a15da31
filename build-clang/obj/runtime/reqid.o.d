build-clang/obj/runtime/reqid.o: src/runtime/reqid.c src/common/util.h \
  src/runtime/rt.h src/common/buf.h src/common/error.h \
  src/common/ratelimit.h src/compiler/typo.h src/edge/edge.h \
  src/http/common/request_id.h src/runtime/http/http1.h \
  src/http/common/forwarded.h src/runtime/runtime.h src/state/state.h \
  src/search/artifact.h src/compiler/compiler.h

src/common/util.h:

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
