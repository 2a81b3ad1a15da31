build-clang/obj/common/redisurl.o: src/common/redisurl.c \
  src/common/redisurl.h src/common/util.h

src/common/redisurl.h:

src/common/util.h:
