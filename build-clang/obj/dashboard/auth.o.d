build-clang/obj/dashboard/auth.o: src/dashboard/auth.c \
  src/dashboard/auth.h src/common/util.h

src/dashboard/auth.h:

src/common/util.h:
