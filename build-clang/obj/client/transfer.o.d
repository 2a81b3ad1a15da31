build-clang/obj/client/transfer.o: src/client/transfer.c src/cli/cli.h \
  src/common/args.h src/edge/edge.h src/store/store.h src/common/error.h \
  src/client/client.h src/client/convert.h src/common/buf.h \
  src/common/util.h

src/cli/cli.h:

src/common/args.h:

src/edge/edge.h:

src/store/store.h:

src/common/error.h:

src/client/client.h:

src/client/convert.h:

src/common/buf.h:

src/common/util.h:
