build-clang/obj/http/common/percent.o: src/http/common/percent.c \
  src/http/common/percent.h src/common/error.h src/common/util.h

src/http/common/percent.h:

src/common/error.h:

src/common/util.h:
