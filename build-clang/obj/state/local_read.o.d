build-clang/obj/state/local_read.o: src/state/local_read.c \
  src/common/util.h src/state/internal.h src/common/buf.h \
  src/state/state.h src/edge/edge.h

src/common/util.h:

src/state/internal.h:

src/common/buf.h:

src/state/state.h:

src/edge/edge.h:
