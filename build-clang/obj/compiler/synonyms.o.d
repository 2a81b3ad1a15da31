build-clang/obj/compiler/synonyms.o: src/compiler/synonyms.c \
  src/compiler/synonyms.h src/common/buf.h src/compiler/compiler.h \
  src/compiler/normalize.h

src/compiler/synonyms.h:

src/common/buf.h:

src/compiler/compiler.h:

src/compiler/normalize.h:
