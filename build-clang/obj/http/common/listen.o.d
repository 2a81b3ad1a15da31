build-clang/obj/http/common/listen.o: src/http/common/listen.c \
  src/http/common/listen.h src/common/util.h

src/http/common/listen.h:

src/common/util.h:
