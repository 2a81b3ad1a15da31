build-clang/obj/common/version.o: src/common/version.c \
  src/common/version.h

src/common/version.h:
