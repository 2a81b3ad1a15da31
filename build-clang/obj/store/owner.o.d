build-clang/obj/store/owner.o: src/store/owner.c \
  src/store/store_internal.h src/store/members.h src/store/store.h \
  src/common/error.h

src/store/store_internal.h:

src/store/members.h:

src/store/store.h:

src/common/error.h:
