build-clang/obj/http/common/forwarded.o: src/http/common/forwarded.c \
  src/http/common/forwarded.h

src/http/common/forwarded.h:
