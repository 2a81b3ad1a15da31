/*
 * The build's version: the release number from the VERSION file and the `git describe
 * --always --dirty` of the tree it was built from. The Makefile passes both to
 * version.c only (SG_VERSION_NUMBER, SG_VERSION_GIT), so a new commit recompiles one file.
 */
#ifndef SG_COMMON_VERSION_H
#define SG_COMMON_VERSION_H

/* "0.1.0". */
const char *sg_version(void);
/* "3739f26" or "3739f26-dirty"; "unknown" when built outside a git checkout. */
const char *sg_version_git(void);

#endif
