build-clang/obj/search/lookup.o: src/search/lookup.c \
  src/search/internal.h src/compiler/format.h src/compiler/words.h \
  src/search/artifact.h src/compiler/compiler.h src/common/buf.h

src/search/internal.h:

src/compiler/format.h:

src/compiler/words.h:

src/search/artifact.h:

src/compiler/compiler.h:

src/common/buf.h:
