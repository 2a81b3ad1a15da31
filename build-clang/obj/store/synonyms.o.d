build-clang/obj/store/synonyms.o: src/store/synonyms.c \
  src/store/store_internal.h src/store/members.h src/store/store.h \
  src/common/error.h

src/store/store_internal.h:

src/store/members.h:

src/store/store.h:

src/common/error.h:
