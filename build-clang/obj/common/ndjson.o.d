build-clang/obj/common/ndjson.o: src/common/ndjson.c src/common/ndjson.h \
  src/common/buf.h

src/common/ndjson.h:

src/common/buf.h:
