build-clang/obj/compiler/words.o: src/compiler/words.c \
  src/compiler/words.h

src/compiler/words.h:
