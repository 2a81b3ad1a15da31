/*
 * Client commands that talk to a running control plane over HTTP (libcurl):
 * `suggestd import` and `suggestd export` (src/client/transfer.c).
 */
#ifndef SG_CLIENT_CLIENT_H
#define SG_CLIENT_CLIENT_H

int sg_cmd_import(int argc, char **argv);
int sg_cmd_export(int argc, char **argv);
/* `suggestd versions activate N --list L …`: rollback through the control plane. */
int sg_cmd_versions(int argc, char **argv);

#endif
