// Nets: a NetDef instantiated in a Workspace (spec §5.7).
//
// Creation checks the def: when external_input is non-empty every op input must be an external
// input or an earlier op's output; every external_output must be produced or be an input. An op
// without a device option inherits the NetDef's. Net types: unset or "simple" runs ops in order;
// "dag", "async_dag", "async_scheduling", "async_simple" and "async_polling" run ops on a thread
// pool as soon as their dependencies (read/write sets and control_input) are done.
//
// Any net records per-op timings when benchmarked, and writes a Chrome trace (chrome://tracing,
// Perfetto) of every run when the NetDef has the string argument "timeline" = output path (the file
// is written when the net is destroyed or WriteTimeline is called).
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "caffe2/proto/caffe2.pb.h"
#include "core/operator.h"

namespace caffe2 {

class Workspace;

class NetBase {
 public:
  NetBase(const NetDef& def, Workspace* ws);
  virtual ~NetBase();
  NetBase(const NetBase&) = delete;
  NetBase& operator=(const NetBase&) = delete;

  // Runs every op once. Throws on the first error; false when an op returned false.
  bool Run();
  const std::string& Name() const { return def_.name(); }
  const NetDef& def() const { return def_; }
  const std::vector<std::string>& external_input() const { return external_input_; }
  const std::vector<std::string>& external_output() const { return external_output_; }
  std::vector<OperatorBase*> GetOperators() const;

  // Milliseconds per run over main_runs after warmup_runs, followed (if run_individual) by the
  // mean milliseconds of each op run one at a time in order.
  std::vector<float> TEST_Benchmark(int warmup_runs, int main_runs, bool run_individual);

  bool tracing() const { return !timeline_path_.empty(); }
  // Writes the Chrome trace collected so far to `path` (default: the "timeline" argument).
  void WriteTimeline(const std::string& path = "");

 protected:
  virtual bool RunImpl() = 0;
  // Runs op i, recording a trace event when tracing.
  bool RunOp(int i);

  NetDef def_;
  Workspace* ws_;
  std::vector<std::unique_ptr<OperatorBase>> ops_;

 private:
  struct TraceEvent {
    int op;
    int64_t start_us;
    int64_t duration_us;
    size_t thread;
  };
  std::vector<std::string> external_input_;
  std::vector<std::string> external_output_;
  std::string timeline_path_;
  std::mutex trace_mutex_;
  std::vector<TraceEvent> trace_;
  std::chrono::steady_clock::time_point trace_origin_;
};

// Creates the net type the def names; throws for an unknown type.
std::unique_ptr<NetBase> CreateNet(const NetDef& def, Workspace* ws);

}  // namespace caffe2
