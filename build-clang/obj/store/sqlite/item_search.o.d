build-clang/obj/store/sqlite/item_search.o: \
  src/store/sqlite/item_search.c src/store/members.h src/store/store.h \
  src/common/error.h src/store/rules.h src/store/sqlite/sqlite_store.h \
  src/store/store_internal.h

src/store/members.h:

src/store/store.h:

src/common/error.h:

src/store/rules.h:

src/store/sqlite/sqlite_store.h:

src/store/store_internal.h:
