build-clang/obj/store/sqlite/lists.o: src/store/sqlite/lists.c \
  src/common/util.h src/compiler/normalize.h src/store/rules.h \
  src/store/sqlite/sqlite_store.h src/store/store_internal.h \
  src/store/members.h src/store/store.h src/common/error.h

src/common/util.h:

src/compiler/normalize.h:

src/store/rules.h:

src/store/sqlite/sqlite_store.h:

src/store/store_internal.h:

src/store/members.h:

src/store/store.h:

src/common/error.h:
