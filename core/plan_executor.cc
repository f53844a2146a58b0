#include "core/plan_executor.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/net.h"
#include "core/workspace.h"

namespace caffe2 {
namespace {

struct PlanState {
  std::map<std::string, const NetDef*> nets;
  std::set<std::string> pending_overwrite;  // nets to re-create on first use
  std::mutex mutex;
  std::function<bool(int)> should_continue;
};

bool StopBlobIsTrue(Workspace* ws, const std::string& name) {
  const Blob* blob = ws->GetBlob(name);
  if (!blob || !blob->IsType<Tensor>()) return false;
  const Tensor& t = blob->Get<Tensor>();
  if (t.numel() == 0 || !t.has_storage()) return false;
  C2_ENFORCE(t.IsType<bool>() && t.numel() == 1, "should_stop_blob ", name,
             " must be a scalar bool tensor, found ", t.DebugString());
  C2_ENFORCE(t.device().type == kCPU, "should_stop_blob ", name, " must live on the CPU");
  return t.data<bool>()[0];
}

NetBase* GetOrCreateNet(PlanState* state, Workspace* ws, const std::string& name) {
  std::lock_guard<std::mutex> lock(state->mutex);
  auto it = state->nets.find(name);
  C2_ENFORCE(it != state->nets.end(), "Plan refers to net ", name, " that it does not define");
  bool overwrite = state->pending_overwrite.erase(name) > 0;
  NetBase* net = overwrite ? nullptr : ws->GetNet(name);
  if (!net) net = ws->CreateNet(*it->second, true);
  return net;
}

class PeriodicRunner {
 public:
  PeriodicRunner(std::chrono::milliseconds interval, std::function<void()> body)
      : interval_(interval), body_(std::move(body)), thread_([this] { Loop(); }) {}
  // Stops the thread, runs the body once more and rethrows the first error.
  void Finish() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    if (error_) std::rethrow_exception(error_);
    body_();
  }
  ~PeriodicRunner() {
    if (thread_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
      }
      cv_.notify_all();
      thread_.join();
    }
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!cv_.wait_for(lock, interval_, [this] { return stop_; })) {
      lock.unlock();
      try {
        body_();
      } catch (...) {
        error_ = std::current_exception();
        return;
      }
      lock.lock();
    }
  }
  std::chrono::milliseconds interval_;
  std::function<void()> body_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

bool ExecuteStep(PlanState* state, Workspace* ws, const ExecutionStep& step);

bool RunStepBody(PlanState* state, Workspace* ws, const ExecutionStep& step,
                 const std::vector<const ExecutionStep*>& substeps, bool* stop) {
  const bool has_stop = step.has_should_stop_blob();
  auto check_stop = [&] {
    if (has_stop && StopBlobIsTrue(ws, step.should_stop_blob())) *stop = true;
    return *stop;
  };
  if (step.network_size() > 0) {
    for (const auto& name : step.network()) {
      NetBase* net = GetOrCreateNet(state, ws, name);
      if (!net->Run()) return false;
      if (check_stop()) return true;
    }
    return true;
  }
  const int instances = std::max(1, step.num_concurrent_instances());
  const bool concurrent = (step.concurrent_substeps() && substeps.size() > 1) || instances > 1;
  if (!concurrent) {
    for (const ExecutionStep* sub : substeps) {
      if (!ExecuteStep(state, ws, *sub)) return false;
      if (check_stop()) return true;
    }
    return true;
  }
  std::atomic<bool> ok{true};
  std::mutex error_mutex;
  std::exception_ptr error;
  std::vector<std::thread> threads;
  for (int k = 0; k < instances; ++k) {
    for (const ExecutionStep* sub : substeps) {
      threads.emplace_back([&, sub] {
        try {
          if (!ExecuteStep(state, ws, *sub)) ok = false;
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!error) error = std::current_exception();
          ok = false;
        }
      });
    }
  }
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
  check_stop();
  return ok;
}

bool ExecuteStepIn(PlanState* state, Workspace* ws, const ExecutionStep& step) {
  const std::string& name = step.name();
  C2_ENFORCE(step.network_size() == 0 || step.substep_size() == 0, "Execution step '", name,
             "' has both networks and substeps; it may hold one or the other");
  if (step.has_should_stop_blob()) {
    C2_ENFORCE(!step.has_num_iter(), "Execution step '", name,
               "' sets both num_iter and should_stop_blob");
  } else {
    C2_ENFORCE(!step.only_once(), "Execution step '", name,
               "' sets only_once without a should_stop_blob");
  }

  std::vector<const ExecutionStep*> substeps;
  std::vector<std::unique_ptr<PeriodicRunner>> reporters;
  for (const auto& sub : step.substep()) {
    if (sub.has_run_every_ms()) {
      C2_ENFORCE(sub.run_every_ms() > 0, "Execution step '", sub.name(), "' has run_every_ms ",
                 sub.run_every_ms(), "; it must be positive");
      const ExecutionStep* s = &sub;
      reporters.push_back(std::make_unique<PeriodicRunner>(
          std::chrono::milliseconds(sub.run_every_ms()), [state, ws, s] {
            C2_ENFORCE(ExecuteStep(state, ws, *s), "Periodic step '", s->name(), "' failed");
          }));
    } else {
      substeps.push_back(&sub);
    }
  }
  if (step.has_report_net()) {
    const std::string report = step.report_net();
    int interval_s = step.has_report_interval() ? step.report_interval() : 1;
    reporters.push_back(std::make_unique<PeriodicRunner>(
        std::chrono::milliseconds(1000LL * std::max(1, interval_s)), [state, ws, report] {
          C2_ENFORCE(GetOrCreateNet(state, ws, report)->Run(), "Report net ", report, " failed");
        }));
  }

  int64_t iterations = step.has_num_iter() ? step.num_iter() : 1;
  const bool until_stop = step.has_should_stop_blob() && !step.only_once();
  bool ok = true;
  bool stop = false;
  for (int64_t iter = 0; until_stop || iter < iterations; ++iter) {
    if (!state->should_continue(static_cast<int>(iter))) break;
    if (!RunStepBody(state, ws, step, substeps, &stop)) {
      ok = false;
      break;
    }
    if (stop) break;
  }
  for (auto& r : reporters) r->Finish();
  return ok;
}

bool ExecuteStep(PlanState* state, Workspace* ws, const ExecutionStep& step) {
  if (step.create_workspace()) {
    Workspace child(ws);
    return ExecuteStepIn(state, &child, step);
  }
  return ExecuteStepIn(state, ws, step);
}

}  // namespace

bool RunPlanOnWorkspace(Workspace* ws, const PlanDef& plan,
                        std::function<bool(int)> should_continue) {
  PlanState state;
  state.should_continue = std::move(should_continue);
  for (const NetDef& net : plan.network()) {
    C2_ENFORCE(state.nets.count(net.name()) == 0, "Plan '", plan.name(), "' defines net ",
               net.name(), " twice");
    state.nets[net.name()] = &net;
    if (ws->GetNet(net.name())) state.pending_overwrite.insert(net.name());
  }
  for (const ExecutionStep& step : plan.execution_step()) {
    if (!ExecuteStep(&state, ws, step)) return false;
  }
  return true;
}

}  // namespace caffe2
