build-clang/obj/admin/edge_rebuild.o: src/admin/edge_rebuild.c \
  src/cli/cli.h src/common/args.h src/edge/edge.h src/store/store.h \
  src/common/error.h src/control/edge_guard.h

src/cli/cli.h:

src/common/args.h:

src/edge/edge.h:

src/store/store.h:

src/common/error.h:

src/control/edge_guard.h:
