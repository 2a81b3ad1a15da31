build-clang/obj/cli/help.o: src/cli/help.c src/cli/cli.h \
  src/common/args.h src/edge/edge.h src/store/store.h src/common/error.h

src/cli/cli.h:

src/common/args.h:

src/edge/edge.h:

src/store/store.h:

src/common/error.h:
