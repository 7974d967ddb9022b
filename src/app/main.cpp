// murmur: the viewer, headless runs, the benchmark and the accuracy report. The only place that
// catches errors and turns them into exit statuses: 2 for bad input, 1 for failures.
#include <cstdio>
#include <exception>
#include <stdexcept>

#include "app/openmp_policy.h"
#include "app/options.h"
#include "app/run.h"
#include "core/errors.h"

int main(int argc, char** argv) {
  using namespace murmur;
  app::preferPassiveOpenMpWait(argv);
  try {
    app::Options o;
    if (!app::parseOptions(argc, argv, o)) return 0;
    app::resolveDefaults(o);
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
  } catch (const core::UsageError& e) {
    std::fprintf(stderr, "murmur: %s\n", e.what());
    return 2;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "murmur: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "murmur: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
