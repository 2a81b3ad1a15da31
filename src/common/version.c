#include "common/version.h"

#ifndef SG_VERSION_NUMBER
#define SG_VERSION_NUMBER "0.0.0"
#endif
#ifndef SG_VERSION_GIT
#define SG_VERSION_GIT "unknown"
#endif

const char *sg_version(void) { return SG_VERSION_NUMBER; }
const char *sg_version_git(void) { return SG_VERSION_GIT[0] ? SG_VERSION_GIT : "unknown"; }
