build-clang/obj/common/jwt.o: src/common/jwt.c src/common/jwt.h

src/common/jwt.h:
