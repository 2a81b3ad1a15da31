build-clang/obj/state/events.o: src/state/events.c src/common/buf.h \
  src/common/metrics.h src/common/util.h src/state/internal.h \
  src/state/state.h src/edge/edge.h

src/common/buf.h:

src/common/metrics.h:

src/common/util.h:

src/state/internal.h:

src/state/state.h:

src/edge/edge.h:
