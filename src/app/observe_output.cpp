#include "app/observe_output.h"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "app/params_json.h"
#include "core/atomic_file.h"
#include "core/format.h"

namespace murmur::app {

void checkObserveOutputs(const Options& o) {
  if (!o.observables.empty()) core::checkWritable("--observables", o.observables);
  if (!o.trajectory.empty()) core::trajectory::checkTrajectoryPath("--trajectory", o.trajectory);
}

std::string observableCell(double v) {
  if (std::isnan(v)) return "";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.12g", v);
  return buf;
}

ObserveOutput::ObserveOutput(const Options& o, const core::SimParams& params, bool speaker)
    : o_(o), params_(params), speaker_(speaker), observe_(!o.observables.empty()), trajectory_(!o.trajectory.empty()) {
  request_.flocks = o.observeFlocks;
  columns_ = core::observedColumns(params.force, o.observeFlocks);
  names_ = {"step", "time"};
  for (core::Obs c : columns_) names_.push_back(core::observableDesc(c).column);
  if (observe_) {
    for (size_t i = 0; i < names_.size(); ++i) csv_ += (i ? "," : "") + names_[i];
    csv_ += "\n";
  }
  if (trajectory_ && speaker_) {
    core::trajectory::Meta meta;
    meta.force = core::toString(params.force);
    meta.halfSize = params.halfSize;
    meta.paramsJson = paramsToJson(params, -1);
    writer_ = std::make_unique<core::trajectory::Writer>("--trajectory", o.trajectory, meta);
  }
}

void ObserveOutput::atStep(core::Engine& engine, uint64_t localSteps) {
  const uint64_t step = engine.stepCount();  // the state's own count: a saved state's steps included
  const double time = double(step) * double(core::activeDt(params_));
  if (observe_ && localSteps >= nextObserve_) {
    const auto t0 = std::chrono::steady_clock::now();
    const core::Observables v = series_.add(engine.observe(request_), time);
    observeMs_ += core::msSince(t0);
    ++samples_;
    nextObserve_ = (localSteps / uint64_t(o_.observeEvery) + 1) * uint64_t(o_.observeEvery);
    std::vector<double> row = {double(step), time};
    for (core::Obs c : columns_) row.push_back(v[c]);
    std::string line = std::to_string(step) + "," + observableCell(time);
    for (size_t i = 2; i < row.size(); ++i) line += "," + observableCell(row[i]);
    csv_ += line + "\n";
    if (writer_) writer_->observables(names_, row);
  }
  if (trajectory_ && localSteps >= nextFrame_) {
    nextFrame_ = (localSteps / uint64_t(o_.trajectoryEvery) + 1) * uint64_t(o_.trajectoryEvery);
    const core::Bodies b = engine.readBodies();  // collective over several ranks; rank 0 holds them
    if (writer_) writer_->frame(b, step, time);
  }
}

void ObserveOutput::finish() {
  if (!speaker_) return;
  if (observe_) {
    core::writeFileAtomically("--observables", o_.observables, csv_);
    std::fprintf(stderr, "murmur: wrote %s (%zu samples, %.3f ms each)\n", o_.observables.c_str(), samples_,
                 meanObserveMs());
  }
  if (writer_)
    std::fprintf(stderr, "murmur: wrote %s (%llu frames) and %s\n", o_.trajectory.c_str(),
                 static_cast<unsigned long long>(writer_->frames()),
                 core::trajectory::xdmfPathFor(o_.trajectory).c_str());
}

}  // namespace murmur::app
