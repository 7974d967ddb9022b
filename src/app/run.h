// The app's modes. Each returns the process exit status; errors are thrown (main maps them).
#pragma once

#include <functional>

#include "app/options.h"
#include "core/csv.h"

namespace murmur::app {

int runHeadless(const Options& o);
int runAccuracy(const Options& o);
int runViewer(const Options& o);
int runBench(const Options& o);
// The same sweep with every measured row handed to `sink` instead of the CSV and its sidecar
// (no file is written): the Python module's in-process bench. A null sink writes the files.
using BenchRowSink = std::function<void(const core::CsvRow&)>;
int runBench(const Options& o, const BenchRowSink& sink);

}  // namespace murmur::app
