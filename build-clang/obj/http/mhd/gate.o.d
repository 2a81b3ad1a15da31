build-clang/obj/http/mhd/gate.o: src/http/mhd/gate.c src/http/mhd/gate.h \
  src/http/common/forwarded.h src/common/util.h

src/http/mhd/gate.h:

src/http/common/forwarded.h:

src/common/util.h:
