// murmur: the viewer, headless runs, the benchmark and the accuracy report. The only place that
// catches errors and turns them into exit statuses: 2 for bad input, 1 for failures.
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>

#include "app/openmp_policy.h"
#include "app/options.h"
#include "app/run.h"
#include "core/errors.h"
#include "dist/launch.h"

int main(int argc, char** argv) {
  using namespace murmur;
  app::preferPassiveOpenMpWait(argv);
  try {
    app::Options o;
    if (!app::parseOptions(argc, argv, o)) return 0;
    app::resolveDefaults(o);
    if (dist::launchedRanks() > 1 && o.mode != app::Mode::Headless)
      throw core::UsageError("started as " + std::to_string(dist::launchedRanks()) +
                             " ranks: only headless runs (--headless) go over several ranks");
    switch (o.mode) {
      case app::Mode::Headless:
        return app::runHeadless(o);
      case app::Mode::Accuracy:
        return app::runAccuracy(o);
      case app::Mode::Bench:
        return app::runBench(o);
      case app::Mode::Viewer:
        return app::runViewer(o);
    }
  } catch (const dist::JobError& e) {
    // Every rank failed the same way; rank 0 says it once.
    if (dist::launchedRank() == 0) std::fprintf(stderr, "murmur: %s\n", e.what());
    return dist::agreedExitStatus(e.status());
  } catch (const core::UsageError& e) {
    return dist::reportError(e.what(), 2);
  } catch (const std::invalid_argument& e) {
    return dist::reportError(e.what(), 2);
  } catch (const std::exception& e) {
    return dist::reportError(std::string("error: ") + e.what(), 1);
  }
  return 0;
}
