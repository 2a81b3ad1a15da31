build-clang/obj/compiler/cli.o: src/compiler/cli.c src/compiler/cli.h \
  src/compiler/typo.h src/common/args.h src/common/arena.h \
  src/common/buf.h src/common/util.h src/compiler/compiler.h \
  src/compiler/normalize.h src/search/artifact.h

src/compiler/cli.h:

src/compiler/typo.h:

src/common/args.h:

src/common/arena.h:

src/common/buf.h:

src/common/util.h:

src/compiler/compiler.h:

src/compiler/normalize.h:

src/search/artifact.h:
