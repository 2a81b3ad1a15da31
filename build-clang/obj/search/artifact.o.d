build-clang/obj/search/artifact.o: src/search/artifact.c \
  src/search/artifact.h src/compiler/compiler.h src/common/buf.h \
  src/common/sha256.h src/common/util.h src/compiler/format.h \
  src/search/internal.h src/compiler/words.h

src/search/artifact.h:

src/compiler/compiler.h:

src/common/buf.h:

src/common/sha256.h:

src/common/util.h:

src/compiler/format.h:

src/search/internal.h:

src/compiler/words.h:
