// The app's modes. Each returns the process exit status; errors are thrown (main maps them).
#pragma once

#include "app/options.h"

namespace murmur::app {

int runHeadless(const Options& o);
int runAccuracy(const Options& o);
int runViewer(const Options& o);
int runBench(const Options& o);

}  // namespace murmur::app
