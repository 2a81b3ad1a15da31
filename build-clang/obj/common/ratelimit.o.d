build-clang/obj/common/ratelimit.o: src/common/ratelimit.c \
  src/common/ratelimit.h

src/common/ratelimit.h:
