build-clang/obj/edge/redis/redis.o: src/edge/redis/redis.c \
  src/common/redisx.h src/common/redisurl.h src/common/sha256.h \
  src/common/util.h src/edge/edge_internal.h src/edge/edge.h \
  src/search/artifact.h src/compiler/compiler.h src/common/buf.h

src/common/redisx.h:

src/common/redisurl.h:

src/common/sha256.h:

src/common/util.h:

src/edge/edge_internal.h:

src/edge/edge.h:

src/search/artifact.h:

src/compiler/compiler.h:

src/common/buf.h:
