build-clang/obj/common/redisx.o: src/common/redisx.c src/common/redisx.h \
  src/common/redisurl.h src/common/util.h

src/common/redisx.h:

src/common/redisurl.h:

src/common/util.h:
