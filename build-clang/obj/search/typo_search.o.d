build-clang/obj/search/typo_search.o: src/search/typo_search.c \
  src/compiler/typo.h src/search/internal.h src/compiler/format.h \
  src/compiler/words.h src/search/artifact.h src/compiler/compiler.h \
  src/common/buf.h

src/compiler/typo.h:

src/search/internal.h:

src/compiler/format.h:

src/compiler/words.h:

src/search/artifact.h:

src/compiler/compiler.h:

src/common/buf.h:
