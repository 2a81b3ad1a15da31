build-clang/obj/state/analytics.o: src/state/analytics.c src/common/buf.h \
  src/common/util.h src/state/internal.h src/state/state.h \
  src/edge/edge.h

src/common/buf.h:

src/common/util.h:

src/state/internal.h:

src/state/state.h:

src/edge/edge.h:
