#include "app/viewer_state.h"

#include "app/summary.h"
#include "core/pipeline_table.h"

namespace murmur::app {

core::ScenarioSpec worldForForce(const core::ScenarioSpec& current, const core::ScenarioSpec& start,
                                 core::ForceMode startForce, core::ForceMode force) {
  if (force == startForce) return start;
  const bool fromFile = current.name.rfind("file:", 0) == 0;
  if (fromFile || core::naturalForce(current.name) == force) return current;
  core::ScenarioSpec other = current;
  other.name = force == core::ForceMode::Gravity ? "plummer" : "uniform";
  return other;
}

std::string runDescription(const core::ScenarioSpec& scenario, size_t n, const core::SimParams& params,
                           const char* drawMode, const char* colourMode, uint64_t steps) {
  const core::Pipeline runs = core::effectivePipeline(params.pipeline, params.force);
  std::string s = scenarioLabel(scenario.name, scenario.denseNeighbours, params.dims) + " | N=" + std::to_string(n) +
                  " | " + core::toString(params.force) + " on " + core::toString(runs);
  if (runs != params.pipeline) s += std::string(" (") + core::toString(params.pipeline) + " asked)";
  s += std::string(" | ") + drawMode + ", " + colourMode + " | " + std::to_string(steps) + " steps";
  return s;
}

}  // namespace murmur::app
