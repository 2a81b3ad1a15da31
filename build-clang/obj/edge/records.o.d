build-clang/obj/edge/records.o: src/edge/records.c src/edge/records.h \
  src/compiler/typo.h src/edge/edge.h

src/edge/records.h:

src/compiler/typo.h:

src/edge/edge.h:
