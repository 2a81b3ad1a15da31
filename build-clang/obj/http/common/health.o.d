build-clang/obj/http/common/health.o: src/http/common/health.c \
  src/http/common/health.h

src/http/common/health.h:
