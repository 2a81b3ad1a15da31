build-clang/obj/state/state.o: src/state/state.c src/common/metrics.h \
  src/common/buf.h src/common/util.h src/state/internal.h \
  src/state/state.h src/edge/edge.h

src/common/metrics.h:

src/common/buf.h:

src/common/util.h:

src/state/internal.h:

src/state/state.h:

src/edge/edge.h:
