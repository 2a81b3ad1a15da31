build-clang/obj/state/redis.o: src/state/redis.c src/common/redisx.h \
  src/common/redisurl.h src/state/keys.h src/common/util.h \
  src/state/internal.h src/common/buf.h src/state/state.h \
  src/edge/edge.h

src/common/redisx.h:

src/common/redisurl.h:

src/state/keys.h:

src/common/util.h:

src/state/internal.h:

src/common/buf.h:

src/state/state.h:

src/edge/edge.h:
