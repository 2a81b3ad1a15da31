build-clang/obj/store/store.o: src/store/store.c src/store/store.h \
  src/common/error.h src/common/util.h src/store/members.h \
  src/store/store_internal.h

src/store/store.h:

src/common/error.h:

src/common/util.h:

src/store/members.h:

src/store/store_internal.h:
