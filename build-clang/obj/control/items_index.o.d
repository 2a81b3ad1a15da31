build-clang/obj/control/items_index.o: src/control/items_index.c \
  src/control/internal.h src/control/control.h src/http/mhd/http.h \
  src/common/buf.h src/common/error.h src/http/common/forwarded.h \
  src/http/common/request_id.h src/store/store.h \
  src/control/edge_guard.h src/edge/edge.h src/common/ratelimit.h \
  src/control/edge_sync.h

src/control/internal.h:

src/control/control.h:

src/http/mhd/http.h:

src/common/buf.h:

src/common/error.h:

src/http/common/forwarded.h:

src/http/common/request_id.h:

src/store/store.h:

src/control/edge_guard.h:

src/edge/edge.h:

src/common/ratelimit.h:

src/control/edge_sync.h:
