build-clang/obj/common/util.o: src/common/util.c src/common/util.h \
  src/common/sha256.h

src/common/util.h:

src/common/sha256.h:
