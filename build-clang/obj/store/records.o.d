build-clang/obj/store/records.o: src/store/records.c src/common/util.h \
  src/store/rules.h src/store/store.h src/common/error.h

src/common/util.h:

src/store/rules.h:

src/store/store.h:

src/common/error.h:
