build-clang/obj/dashboard/h_usage.o: src/dashboard/h_usage.c \
  src/common/util.h src/dashboard/internal.h src/common/ratelimit.h \
  src/control/internal.h src/control/control.h src/http/mhd/http.h \
  src/common/buf.h src/common/error.h src/http/common/forwarded.h \
  src/http/common/request_id.h src/store/store.h \
  src/control/edge_guard.h src/edge/edge.h src/control/edge_sync.h \
  src/dashboard/auth.h src/dashboard/dashboard.h src/store/members.h \
  src/state/state.h

src/common/util.h:

src/dashboard/internal.h:

src/common/ratelimit.h:

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

src/control/edge_sync.h:

src/dashboard/auth.h:

src/dashboard/dashboard.h:

src/store/members.h:

src/state/state.h:
