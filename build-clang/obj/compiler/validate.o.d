build-clang/obj/compiler/validate.o: src/compiler/validate.c \
  src/common/util.h src/compiler/compiler.h src/common/buf.h

src/common/util.h:

src/compiler/compiler.h:

src/common/buf.h:
