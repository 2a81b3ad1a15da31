#include "common/bearer.h"

#include <ctype.h>
#include <strings.h>

static bool b64token_char(char c) {
  return isalnum((unsigned char)c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' ||
         c == '/';
}

bool sg_bearer_token(const char *header, const char **tok, size_t *len) {
  if (!header || strncasecmp(header, "Bearer", 6) != 0 || header[6] != ' ') return false;
  const char *p = header + 7;
  while (*p == ' ') p++;
  const char *start = p;
  while (b64token_char(*p)) p++;
  if (p == start) return false;
  while (*p == '=') p++;
  const char *end = p;
  while (*p == ' ' || *p == '\t') p++;
  if (*p) return false;
  *tok = start;
  *len = (size_t)(end - start);
  return true;
}
