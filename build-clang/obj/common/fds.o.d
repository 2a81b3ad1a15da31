build-clang/obj/common/fds.o: src/common/fds.c src/common/fds.h

src/common/fds.h:
