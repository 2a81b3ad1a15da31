build-clang/obj/search/words.o: src/search/words.c src/compiler/words.h \
  src/search/internal.h src/compiler/format.h src/search/artifact.h \
  src/compiler/compiler.h src/common/buf.h

src/compiler/words.h:

src/search/internal.h:

src/compiler/format.h:

src/search/artifact.h:

src/compiler/compiler.h:

src/common/buf.h:
