build-clang/obj/edge/dir/dir.o: src/edge/dir/dir.c src/common/util.h \
  src/edge/edge_internal.h src/edge/edge.h src/search/artifact.h \
  src/compiler/compiler.h src/common/buf.h

src/common/util.h:

src/edge/edge_internal.h:

src/edge/edge.h:

src/search/artifact.h:

src/compiler/compiler.h:

src/common/buf.h:
