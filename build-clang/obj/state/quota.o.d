build-clang/obj/state/quota.o: src/state/quota.c src/common/util.h \
  src/state/internal.h src/common/buf.h src/state/state.h \
  src/edge/edge.h

src/common/util.h:

src/state/internal.h:

src/common/buf.h:

src/state/state.h:

src/edge/edge.h:
