build-clang/obj/edge/edge.o: src/edge/edge.c src/edge/edge.h \
  src/common/redisx.h src/common/redisurl.h src/common/util.h \
  src/edge/edge_internal.h

src/edge/edge.h:

src/common/redisx.h:

src/common/redisurl.h:

src/common/util.h:

src/edge/edge_internal.h:
