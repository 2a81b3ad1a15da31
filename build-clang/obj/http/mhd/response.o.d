build-clang/obj/http/mhd/response.o: src/http/mhd/response.c \
  src/http/mhd/http.h src/common/buf.h src/common/error.h \
  src/http/common/forwarded.h src/http/common/request_id.h

src/http/mhd/http.h:

src/common/buf.h:

src/common/error.h:

src/http/common/forwarded.h:

src/http/common/request_id.h:
