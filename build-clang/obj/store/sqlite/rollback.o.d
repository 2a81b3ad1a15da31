build-clang/obj/store/sqlite/rollback.o: src/store/sqlite/rollback.c \
  src/common/util.h src/store/rules.h src/store/sqlite/sqlite_store.h \
  src/store/store_internal.h src/store/members.h src/store/store.h \
  src/common/error.h

src/common/util.h:

src/store/rules.h:

src/store/sqlite/sqlite_store.h:

src/store/store_internal.h:

src/store/members.h:

src/store/store.h:

src/common/error.h:
