// Must NOT compile: core code including a header of several ranks (see tests/CMakeLists.txt).
#include "dist/module_guard.h"
int murmurForbiddenDist() { return 0; }
