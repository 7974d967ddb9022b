// Must NOT compile: core code including a renderer header (see tests/CMakeLists.txt).
#include "render/module_guard.h"
int murmurForbiddenRender() { return 0; }
