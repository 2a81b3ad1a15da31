build-clang/obj/store/sqlite/analytics.o: src/store/sqlite/analytics.c \
  src/store/sqlite/sqlite_store.h src/store/rules.h \
  src/store/store_internal.h src/store/members.h src/store/store.h \
  src/common/error.h

src/store/sqlite/sqlite_store.h:

src/store/rules.h:

src/store/store_internal.h:

src/store/members.h:

src/store/store.h:

src/common/error.h:
