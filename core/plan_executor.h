// Runs a PlanDef on a workspace (spec §5.8).
//
// Each top-level execution step runs in order. A step holds nets or substeps, never both.
// - Iterations: num_iter times (default 1), or, with should_stop_blob (then num_iter is not
//   allowed), until that scalar bool blob is true; it is checked after every net or substep.
//   only_once (needs should_stop_blob) runs the body a single time.
// - Substeps run in order, or each on its own thread per iteration with concurrent_substeps (two or
//   more substeps) or num_concurrent_instances > 1; the first failure fails the step.
// - Substeps with run_every_ms, and report_net every report_interval seconds, run periodically on
//   their own thread while the siblings run, and once more when they finish.
// - create_workspace runs the step in a fresh child workspace each time.
// Nets are created lazily in the step's workspace; nets that already existed in the workspace when
// the plan started are re-created (overwritten) from the plan's definition on first use.
#pragma once

#include <functional>

#include "caffe2/proto/caffe2.pb.h"

namespace caffe2 {

class Workspace;

// Returns false when a net or step reports failure; throws on errors. should_continue(iteration)
// is polled before every iteration of every step.
bool RunPlanOnWorkspace(Workspace* ws, const PlanDef& plan,
                        std::function<bool(int)> should_continue);

}  // namespace caffe2
