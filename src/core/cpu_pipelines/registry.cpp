// The pipelines of the CPU engine: one line per pipeline, core::Pipeline to its factory. Every
// row of core/pipeline_table.h marked kOnCpu has a line here and every line such a row
// (tests/core/test_pipeline_table.cpp checks both).
#include <stdexcept>
#include <string>

#include "core/cpu_pipeline.h"

namespace murmur::core {

const std::vector<CpuPipelineEntry>& cpuPipelineRegistry() {
  static const std::vector<CpuPipelineEntry> registry = {
      {Pipeline::Naive, makeNaivePipeline},
      {Pipeline::Scattered, makeScatteredPipeline},
      {Pipeline::Coherent, makeCoherentPipeline},
      {Pipeline::Rows, makeRowsPipeline},
      {Pipeline::Tree, makeTreePipeline},
      {Pipeline::Verlet, makeVerletPipeline},
      {Pipeline::Clusters, makeClustersPipeline},
  };
  return registry;
}

std::unique_ptr<CpuPipeline> createCpuPipeline(Pipeline p) {
  for (const CpuPipelineEntry& e : cpuPipelineRegistry())
    if (e.id == p) return e.make();
  throw std::invalid_argument(std::string("the CPU engine has no pipeline ") + toString(p));
}

}  // namespace murmur::core
