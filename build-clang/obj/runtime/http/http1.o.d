build-clang/obj/runtime/http/http1.o: src/runtime/http/http1.c \
  src/runtime/http/http1.h src/http/common/forwarded.h src/common/buf.h \
  src/common/error.h src/common/util.h src/http/common/percent.h

src/runtime/http/http1.h:

src/http/common/forwarded.h:

src/common/buf.h:

src/common/error.h:

src/common/util.h:

src/http/common/percent.h:
