// Control: core code including core headers compiles under the same settings.
#include "core/physics.h"
int murmurAllowedCore() { return 0; }
