// Which file implements each row of the pipeline table (core/pipeline_table.h) on the CUDA
// engine: one line per pipeline.
#include <stdexcept>
#include <string>

#include "core/pipeline_table.h"
#include "cuda/cuda_pipeline.h"

namespace murmur::cuda {

namespace {

struct Entry {
  core::Pipeline id;
  std::unique_ptr<CudaPipeline> (*make)();
};

constexpr Entry kPipelines[] = {
    {core::Pipeline::Naive, makeNaivePipeline},
    {core::Pipeline::Scattered, makeScatteredPipeline},
    {core::Pipeline::Coherent, makeCoherentPipeline},
    {core::Pipeline::Rows, makeRowsPipeline},
    {core::Pipeline::Tree, makeTreePipeline},
    {core::Pipeline::Verlet, makeVerletPipeline},
    {core::Pipeline::Clusters, makeClustersPipeline},
};

}  // namespace

bool CudaPipeline::localForce(const LocalForcePass& pass) const {
  throw std::logic_error(std::string("the CUDA pipeline ") + core::toString(pass.params->pipeline) +
                         " runs no local force pass (it does not run over ranks)");
}

void CudaPipeline::localIntegrate(const LocalForcePass& pass) const {
  throw std::logic_error(std::string("the CUDA pipeline ") + core::toString(pass.params->pipeline) +
                         " integrates in its force pass");
}

std::unique_ptr<CudaPipeline> makeCudaPipeline(core::Pipeline p) {
  for (const Entry& e : kPipelines)
    if (e.id == p) return e.make();
  throw std::logic_error(std::string("the CUDA engine has no pipeline ") + core::toString(p));
}

}  // namespace murmur::cuda
