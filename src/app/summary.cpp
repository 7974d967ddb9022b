#include "app/summary.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "app/bench.h"
#include "core/pipeline_table.h"

namespace murmur::app {

std::string scenarioLabel(const std::string& name, double denseNeighbours, int dims) {
  std::string label = name;
  if (name == "dense") {
    char buf[48];
    std::snprintf(buf, sizeof buf, "dense:%g", denseNeighbours);
    label = buf;
  }
  return dims == 2 ? label + "/2d" : label;
}

std::string summaryLine(const RunSummary& s) {
  const double med = s.stepMs.empty() ? 0.0 : stepStats(s.stepMs).median;
  // The block size is a CUDA launch setting; the cell width belongs to the boids grids.
  const std::string block = s.engine == core::EngineKind::Cuda ? std::to_string(s.params.blockSize) : "-";
  const std::string cellWidth =
      core::hasCellWidth(s.params.pipeline, s.params.force) ? std::to_string(s.params.cellWidthFactor) : "-";
  char checksum[24] = "off";
  if (s.checksum) std::snprintf(checksum, sizeof checksum, "%016" PRIx64, *s.checksum);
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "engine=%s force=%s pipeline=%s scenario=%s n=%zu steps=%d block=%s cell_width=%s "
                "ms_per_step=%.4f total_ms=%.1f checksum=%s",
                core::toString(s.engine), core::toString(s.params.force), core::toString(s.params.pipeline),
                scenarioLabel(s.scenario.name, s.scenario.denseNeighbours, s.params.dims).c_str(), s.n, s.steps, block.c_str(), cellWidth.c_str(), med, s.totalMs,
                checksum);
  std::string line = buf;
  if (s.rendered) {
    const double rm = s.renderMs.empty() ? 0.0 : stepStats(s.renderMs).median;
    // A frame rate needs at least two frames: one frame is a time, not a rate.
    char fps[32] = "-";
    if (s.renderMs.size() >= 2) std::snprintf(fps, sizeof fps, "%.1f", 1000.0 / std::max(1e-6, med + rm));
    std::snprintf(buf, sizeof buf, " render_ms=%.4f fps=%s interop=%s frames_drawn=%zu frames_written=%d", rm, fps,
                  s.interop ? "on" : "off", s.renderMs.size(), s.framesWritten);
    line += buf;
  }
  return line;
}

}  // namespace murmur::app
