/*
 * Opaque, tamper-evident pagination cursors.
 *
 * A cursor is base64url(JSON [scope, sort key…]) "." base64url(HMAC-SHA256 truncated to
 * 16 bytes) under a secret kept in the store. The scope names the collection (e.g.
 * "lists:<workspace>") so a cursor cannot be replayed against another collection.
 */
#ifndef SG_CONTROL_CURSOR_H
#define SG_CONTROL_CURSOR_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Encodes; returns a malloc'd string or NULL. key is not stolen. */
char *sg_cursor_encode(const uint8_t secret[32], const char *scope, const json_t *key);
/* Decodes and verifies; returns the sort key (new reference) or NULL when the cursor is
 * malformed, forged, or for another scope. At most 1024 bytes are accepted. */
json_t *sg_cursor_decode(const uint8_t secret[32], const char *scope, const char *cursor);

#endif
