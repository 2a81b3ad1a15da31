build-clang/obj/common/sha256.o: src/common/sha256.c src/common/sha256.h

src/common/sha256.h:
