build-clang/obj/dashboard/h_applications.o: \
  src/dashboard/h_applications.c src/cli/cli.h src/common/args.h \
  src/edge/edge.h src/store/store.h src/common/error.h src/common/util.h \
  src/common/origin.h src/control/edge_sync.h src/control/keys.h \
  src/dashboard/internal.h src/common/ratelimit.h src/control/internal.h \
  src/control/control.h src/http/mhd/http.h src/common/buf.h \
  src/http/common/forwarded.h src/http/common/request_id.h \
  src/control/edge_guard.h src/dashboard/auth.h \
  src/dashboard/dashboard.h src/store/members.h

src/cli/cli.h:

src/common/args.h:

src/edge/edge.h:

src/store/store.h:

src/common/error.h:

src/common/util.h:

src/common/origin.h:

src/control/edge_sync.h:

src/control/keys.h:

src/dashboard/internal.h:

src/common/ratelimit.h:

src/control/internal.h:

src/control/control.h:

src/http/mhd/http.h:

src/common/buf.h:

src/http/common/forwarded.h:

src/http/common/request_id.h:

src/control/edge_guard.h:

src/dashboard/auth.h:

src/dashboard/dashboard.h:

src/store/members.h:
