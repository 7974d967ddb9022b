// One helper for the tests of every engine: an engine's state some steps after a reset.
#pragma once

#include "core/bodies.h"
#include "core/engine.h"

namespace murmur::test {

// The state `steps` steps of engine e after a reset to b.
inline core::Bodies runSteps(core::Engine& e, const core::Bodies& b, int steps) {
  e.reset(b);
  e.step(steps);
  return e.readBodies();
}

}  // namespace murmur::test
