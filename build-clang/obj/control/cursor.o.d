build-clang/obj/control/cursor.o: src/control/cursor.c \
  src/control/cursor.h

src/control/cursor.h:
