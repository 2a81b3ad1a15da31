build-clang/obj/common/workpool.o: src/common/workpool.c \
  src/common/workpool.h

src/common/workpool.h:
