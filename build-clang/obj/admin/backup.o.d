build-clang/obj/admin/backup.o: src/admin/backup.c src/cli/cli.h \
  src/common/args.h src/edge/edge.h src/store/store.h src/common/error.h \
  src/search/artifact.h src/compiler/compiler.h src/common/buf.h

src/cli/cli.h:

src/common/args.h:

src/edge/edge.h:

src/store/store.h:

src/common/error.h:

src/search/artifact.h:

src/compiler/compiler.h:

src/common/buf.h:
