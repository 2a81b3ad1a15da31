build-clang/obj/store/sqlite/members.o: src/store/sqlite/members.c \
  src/common/util.h src/store/members.h src/store/store.h \
  src/common/error.h src/store/sqlite/sqlite_store.h src/store/rules.h \
  src/store/store_internal.h

src/common/util.h:

src/store/members.h:

src/store/store.h:

src/common/error.h:

src/store/sqlite/sqlite_store.h:

src/store/rules.h:

src/store/store_internal.h:
