build-clang/obj/common/args.o: src/common/args.c src/common/args.h

src/common/args.h:
