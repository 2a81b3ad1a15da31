build-clang/obj/client/convert.o: src/client/convert.c \
  src/client/convert.h src/common/buf.h src/common/util.h

src/client/convert.h:

src/common/buf.h:

src/common/util.h:
