build-clang/obj/control/edge_rebuild.o: src/control/edge_rebuild.c \
  src/common/buf.h src/common/util.h src/control/edge_sync.h \
  src/edge/edge.h src/store/store.h src/common/error.h \
  src/search/artifact.h src/compiler/compiler.h

src/common/buf.h:

src/common/util.h:

src/control/edge_sync.h:

src/edge/edge.h:

src/store/store.h:

src/common/error.h:

src/search/artifact.h:

src/compiler/compiler.h:
