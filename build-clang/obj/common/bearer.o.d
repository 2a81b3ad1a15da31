build-clang/obj/common/bearer.o: src/common/bearer.c src/common/bearer.h

src/common/bearer.h:
