build-clang/obj/http/common/request_id.o: src/http/common/request_id.c \
  src/http/common/request_id.h

src/http/common/request_id.h:
