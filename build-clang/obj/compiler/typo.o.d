build-clang/obj/compiler/typo.o: src/compiler/typo.c src/compiler/typo.h \
  src/compiler/normalize.h src/compiler/words.h

src/compiler/typo.h:

src/compiler/normalize.h:

src/compiler/words.h:
