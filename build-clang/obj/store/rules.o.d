build-clang/obj/store/rules.o: src/store/rules.c src/store/rules.h \
  src/common/util.h src/compiler/normalize.h src/store/members.h \
  src/store/store.h src/common/error.h

src/store/rules.h:

src/common/util.h:

src/compiler/normalize.h:

src/store/members.h:

src/store/store.h:

src/common/error.h:
