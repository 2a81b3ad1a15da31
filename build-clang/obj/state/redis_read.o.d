build-clang/obj/state/redis_read.o: src/state/redis_read.c \
  src/common/redisx.h src/common/redisurl.h src/common/util.h \
  src/state/internal.h src/common/buf.h src/state/state.h \
  src/edge/edge.h src/state/keys.h

src/common/redisx.h:

src/common/redisurl.h:

src/common/util.h:

src/state/internal.h:

src/common/buf.h:

src/state/state.h:

src/edge/edge.h:

src/state/keys.h:
