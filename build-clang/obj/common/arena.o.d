build-clang/obj/common/arena.o: src/common/arena.c src/common/arena.h

src/common/arena.h:
