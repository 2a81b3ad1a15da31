build-clang/obj/compiler/compile.o: src/compiler/compile.c \
  src/compiler/compiler.h src/common/buf.h src/compiler/format.h \
  src/compiler/normalize.h src/compiler/synonyms.h src/compiler/typo.h \
  src/compiler/words.h

src/compiler/compiler.h:

src/common/buf.h:

src/compiler/format.h:

src/compiler/normalize.h:

src/compiler/synonyms.h:

src/compiler/typo.h:

src/compiler/words.h:
