build-clang/obj/control/keys.o: src/control/keys.c src/common/util.h \
  src/control/edge_sync.h src/edge/edge.h src/store/store.h \
  src/common/error.h src/control/keys.h

src/common/util.h:

src/control/edge_sync.h:

src/edge/edge.h:

src/store/store.h:

src/common/error.h:

src/control/keys.h:
