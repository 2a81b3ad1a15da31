build-clang/obj/dashboard/h_import.o: src/dashboard/h_import.c \
  src/client/convert.h src/common/buf.h src/dashboard/internal.h \
  src/common/ratelimit.h src/control/internal.h src/control/control.h \
  src/http/mhd/http.h src/common/error.h src/http/common/forwarded.h \
  src/http/common/request_id.h src/store/store.h \
  src/control/edge_guard.h src/edge/edge.h src/control/edge_sync.h \
  src/dashboard/auth.h src/dashboard/dashboard.h src/store/members.h

src/client/convert.h:

src/common/buf.h:

src/dashboard/internal.h:

src/common/ratelimit.h:

src/control/internal.h:

src/control/control.h:

src/http/mhd/http.h:

src/common/error.h:

src/http/common/forwarded.h:

src/http/common/request_id.h:

src/store/store.h:

src/control/edge_guard.h:

src/edge/edge.h:

src/control/edge_sync.h:

src/dashboard/auth.h:

src/dashboard/dashboard.h:

src/store/members.h:
