build-clang/obj/common/metrics.o: src/common/metrics.c \
  src/common/metrics.h src/common/buf.h src/common/version.h

src/common/metrics.h:

src/common/buf.h:

src/common/version.h:
