build-clang/obj/edge/runtimes.o: src/edge/runtimes.c src/edge/edge.h \
  src/edge/edge_internal.h

src/edge/edge.h:

src/edge/edge_internal.h:
