build-clang/obj/state/local.o: src/state/local.c src/common/ratelimit.h \
  src/common/util.h src/state/internal.h src/common/buf.h \
  src/state/state.h src/edge/edge.h

src/common/ratelimit.h:

src/common/util.h:

src/state/internal.h:

src/common/buf.h:

src/state/state.h:

src/edge/edge.h:
