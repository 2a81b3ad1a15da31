build-clang/obj/store/postgres/items.o: src/store/postgres/items.c \
  src/common/util.h src/store/postgres/pg.h \
  /usr/include/postgresql/libpq-fe.h \
  /usr/include/postgresql/postgres_ext.h \
  /usr/include/postgresql/pg_config_ext.h src/store/store_internal.h \
  src/store/members.h src/store/store.h src/common/error.h \
  src/store/rules.h

src/common/util.h:

src/store/postgres/pg.h:

/usr/include/postgresql/libpq-fe.h:

/usr/include/postgresql/postgres_ext.h:

/usr/include/postgresql/pg_config_ext.h:

src/store/store_internal.h:

src/store/members.h:

src/store/store.h:

src/common/error.h:

src/store/rules.h:
