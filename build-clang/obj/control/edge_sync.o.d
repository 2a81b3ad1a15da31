build-clang/obj/control/edge_sync.o: src/control/edge_sync.c \
  src/control/edge_sync.h src/edge/edge.h src/store/store.h \
  src/common/error.h src/common/util.h src/control/internal.h \
  src/control/control.h src/http/mhd/http.h src/common/buf.h \
  src/http/common/forwarded.h src/http/common/request_id.h \
  src/control/edge_guard.h src/common/ratelimit.h src/edge/records.h \
  src/compiler/typo.h

src/control/edge_sync.h:

src/edge/edge.h:

src/store/store.h:

src/common/error.h:

src/common/util.h:

src/control/internal.h:

src/control/control.h:

src/http/mhd/http.h:

src/common/buf.h:

src/http/common/forwarded.h:

src/http/common/request_id.h:

src/control/edge_guard.h:

src/common/ratelimit.h:

src/edge/records.h:

src/compiler/typo.h:
