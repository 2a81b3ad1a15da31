/*
 * The build's version: the release number of the newest release tag vX.Y.Z (the VERSION
 * file when there is none) and the `git describe --tags --always --dirty` of the tree it
 * was built from. The Makefile passes both to version.c only (SG_VERSION_NUMBER,
 * SG_VERSION_GIT), so a new commit recompiles one file.
 */
#ifndef SG_COMMON_VERSION_H
#define SG_COMMON_VERSION_H

/* "0.1.0". */
const char *sg_version(void);
/* "v0.2.0-3-g3739f26", "3739f26-dirty" (before the first tag); "unknown" outside git. */
const char *sg_version_git(void);

#endif
