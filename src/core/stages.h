// The stages of a step, listed once: the engines time them (StepProfile), the benchmark CSV and
// the headless CSV name them (<name>_ms columns), the panel shows them, the plots draw them.
// What each stage covers: docs/design.md#the-engine-interface.
#pragma once

namespace murmur::core {

//   label:     cell key per body
//   sort:      order the bodies by cell key
//   bounds:    cell start/end; gravity adds its grid from the bounding box and the cell monopoles;
//              the tree its build and moments
//   reorder:   gather pos/vel/id into cell order
//   list:      the verlet pipeline's list build (its search), in the steps that build one
//   force:     the neighbour or pair loop
//   integrate: kicks, drifts and the boundary
//   comm:      moving bodies between ranks (several ranks only: halos, migrants, gathers)
enum class Stage : int { Label = 0, Sort, Bounds, Reorder, List, Force, Integrate, Comm };
constexpr int kStageCount = 8;

// The stage's name ("label"); its CSV column is the name and "_ms".
constexpr const char* kStageNames[kStageCount] = {"label", "sort",  "bounds",    "reorder",
                                                  "list",  "force", "integrate", "comm"};
constexpr const char* kStageColumns[kStageCount] = {"label_ms", "sort_ms",  "bounds_ms",    "reorder_ms",
                                                    "list_ms",  "force_ms", "integrate_ms", "comm_ms"};

constexpr unsigned stageBit(Stage s) { return 1u << static_cast<int>(s); }

}  // namespace murmur::core
