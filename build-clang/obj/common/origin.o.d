build-clang/obj/common/origin.o: src/common/origin.c src/common/origin.h

src/common/origin.h:
