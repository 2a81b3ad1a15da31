build-clang/obj/store/postgres/ops.o: src/store/postgres/ops.c \
  src/store/postgres/pg.h /usr/include/postgresql/libpq-fe.h \
  /usr/include/postgresql/postgres_ext.h \
  /usr/include/postgresql/pg_config_ext.h src/store/store_internal.h \
  src/store/members.h src/store/store.h src/common/error.h

src/store/postgres/pg.h:

/usr/include/postgresql/libpq-fe.h:

/usr/include/postgresql/postgres_ext.h:

/usr/include/postgresql/pg_config_ext.h:

src/store/store_internal.h:

src/store/members.h:

src/store/store.h:

src/common/error.h:
