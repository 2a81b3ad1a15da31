build-clang/obj/http/mhd/server.o: src/http/mhd/server.c \
  src/common/metrics.h src/common/buf.h src/common/util.h \
  src/common/workpool.h src/http/common/listen.h \
  src/http/common/percent.h src/common/error.h src/http/mhd/gate.h \
  src/http/common/forwarded.h src/http/mhd/http.h \
  src/http/common/request_id.h

src/common/metrics.h:

src/common/buf.h:

src/common/util.h:

src/common/workpool.h:

src/http/common/listen.h:

src/http/common/percent.h:

src/common/error.h:

src/http/mhd/gate.h:

src/http/common/forwarded.h:

src/http/mhd/http.h:

src/http/common/request_id.h:
