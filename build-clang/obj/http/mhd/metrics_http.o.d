build-clang/obj/http/mhd/metrics_http.o: src/http/mhd/metrics_http.c \
  src/http/mhd/metrics_http.h src/http/mhd/http.h src/common/buf.h \
  src/common/error.h src/http/common/forwarded.h \
  src/http/common/request_id.h src/common/metrics.h \
  src/http/common/listen.h

src/http/mhd/metrics_http.h:

src/http/mhd/http.h:

src/common/buf.h:

src/common/error.h:

src/http/common/forwarded.h:

src/http/common/request_id.h:

src/common/metrics.h:

src/http/common/listen.h:
