build-clang/obj/compiler/normalize.o: src/compiler/normalize.c \
  src/compiler/normalize.h

src/compiler/normalize.h:
