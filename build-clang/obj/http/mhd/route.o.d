build-clang/obj/http/mhd/route.o: src/http/mhd/route.c \
  src/http/mhd/route.h src/http/mhd/http.h src/common/buf.h \
  src/common/error.h src/http/common/forwarded.h \
  src/http/common/request_id.h

src/http/mhd/route.h:

src/http/mhd/http.h:

src/common/buf.h:

src/common/error.h:

src/http/common/forwarded.h:

src/http/common/request_id.h:
