#pragma once
// How the CPU engine's OpenMP threads wait between parallel regions.
//
// libgomp's default is to spin for a while before sleeping. On a quiet machine that saves a few
// microseconds per stage; on a busy one (another process, the viewer's own GL threads) the spinning
// threads steal the cores the working threads need, and a 20k-boid step took many times as long.
// Sleeping at once (OMP_WAIT_POLICY=passive) kept it far shorter under the same load
// (measurements: docs/performance.md#the-cpu-engines-openmp-threads). libgomp reads
// the policy from the environment when it is loaded, before main runs, so the only way to choose it
// from inside the program is to set the variable and start the program again.
namespace murmur::app {

// If OMP_WAIT_POLICY is unset, sets it to "passive" and re-executes this program with the same
// arguments (it does not return then). A policy the user set is kept; if re-executing fails the
// program goes on with the library's default.
void preferPassiveOpenMpWait(char** argv);

}  // namespace murmur::app
