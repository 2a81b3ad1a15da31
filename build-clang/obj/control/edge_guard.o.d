build-clang/obj/control/edge_guard.o: src/control/edge_guard.c \
  src/control/edge_guard.h src/edge/edge.h src/store/store.h \
  src/common/error.h src/common/util.h src/control/edge_sync.h

src/control/edge_guard.h:

src/edge/edge.h:

src/store/store.h:

src/common/error.h:

src/common/util.h:

src/control/edge_sync.h:
