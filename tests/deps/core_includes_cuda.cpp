// Must NOT compile: core code including a CUDA-engine header (see tests/CMakeLists.txt).
#include "cuda/module_guard.h"
int murmurForbiddenCuda() { return 0; }
