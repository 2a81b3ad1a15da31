build-clang/obj/admin/admin.o: src/admin/admin.c src/cli/cli.h \
  src/common/args.h src/edge/edge.h src/store/store.h src/common/error.h \
  src/common/origin.h src/common/util.h src/control/edge_sync.h \
  src/control/keys.h src/dashboard/auth.h src/store/members.h

src/cli/cli.h:

src/common/args.h:

src/edge/edge.h:

src/store/store.h:

src/common/error.h:

src/common/origin.h:

src/common/util.h:

src/control/edge_sync.h:

src/control/keys.h:

src/dashboard/auth.h:

src/store/members.h:
