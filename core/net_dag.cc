// The parallel nets ("dag" and the async_* names): ops form a graph with an edge i -> j when op j
// reads a blob op i writes (RAW), writes a blob op i writes (WAW) or writes a blob op i reads
// (WAR), or names a blob op i writes in its control_input. Ready ops run on the net's own worker
// threads (NetDef.num_workers, default: one per core). The first error stops scheduling; Run
// rethrows it once the running ops have finished.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <set>

#include "core/logging.h"
#include "core/net.h"
#include "core/net_executors.h"
#include "core/thread_pool.h"

namespace caffe2 {
namespace {

// NetDef.num_workers is deprecated in the proto, but dag nets still honour it (spec §5.7), up to
// the number of ops (more workers could never run at once).
int NumWorkers(const NetDef& def) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  const int requested = def.has_num_workers() ? def.num_workers() : 0;
#pragma GCC diagnostic pop
  C2_ENFORCE(requested >= 0, "Net '", def.name(),
             "': num_workers must be >= 0 (0: one per core), got ", requested);
  const int wanted = requested > 0 ? requested : ThreadPool::DefaultSize();
  return std::max(1, std::min(wanted, def.op_size()));
}

class DAGNet final : public NetBase {
 public:
  DAGNet(const NetDef& def, Workspace* ws) : NetBase(def, ws) {
    BuildGraph();
    pool_ = std::make_unique<ThreadPool>(NumWorkers(def));
    C2_LOG(Info) << "Created net '" << def.name() << "': dag executor, " << def.op_size()
                 << " ops on " << NumWorkers(def) << " worker thread(s)";
  }

 protected:
  bool RunImpl() override {
    std::lock_guard<std::mutex> run_lock(run_mutex_);  // one Run at a time
    const int n = static_cast<int>(ops_.size());
    if (n == 0) return true;
    pending_parents_ = std::vector<std::atomic<int>>(n);
    for (int i = 0; i < n; ++i) pending_parents_[i] = static_cast<int>(parents_[i].size());
    remaining_ = n;
    failed_ = false;
    op_returned_false_ = false;
    error_ = nullptr;
    for (int i = 0; i < n; ++i) {
      if (parents_[i].empty()) Schedule(i);
    }
    std::unique_lock<std::mutex> lock(done_mutex_);
    done_cv_.wait(lock, [this] { return remaining_ == 0; });
    if (error_) std::rethrow_exception(error_);
    return !op_returned_false_;
  }

 private:
  void BuildGraph() {
    const int n = static_cast<int>(ops_.size());
    parents_.assign(n, {});
    children_.assign(n, {});
    std::map<std::string, int> last_writer;
    std::map<std::string, std::vector<int>> readers_since_write;
    for (int j = 0; j < n; ++j) {
      const OperatorDef& op = def_.op(j);
      std::set<int> deps;
      for (const auto& in : op.input()) {
        auto w = last_writer.find(in);
        if (w != last_writer.end()) deps.insert(w->second);
      }
      for (const auto& c : op.control_input()) {
        auto w = last_writer.find(c);
        if (w != last_writer.end()) deps.insert(w->second);
      }
      for (const auto& out : op.output()) {
        auto w = last_writer.find(out);
        if (w != last_writer.end()) deps.insert(w->second);
        for (int r : readers_since_write[out]) deps.insert(r);
      }
      deps.erase(j);
      for (const auto& in : op.input()) readers_since_write[in].push_back(j);
      for (const auto& out : op.output()) {
        last_writer[out] = j;
        readers_since_write[out].clear();
      }
      for (int p : deps) {
        parents_[j].push_back(p);
        children_[p].push_back(j);
      }
    }
  }

  void Schedule(int i) {
    pool_->Run([this, i] { Execute(i); });
  }

  void Execute(int i) {
    if (!failed_) {
      try {
        if (!RunOp(i)) {
          op_returned_false_ = true;
          failed_ = true;
        }
      } catch (...) {
        std::lock_guard<std::mutex> lock(done_mutex_);
        if (!error_) error_ = std::current_exception();
        failed_ = true;
      }
    }
    // Children are released even after a failure so that the run drains and completes.
    for (int c : children_[i]) {
      if (--pending_parents_[c] == 0) Schedule(c);
    }
    std::lock_guard<std::mutex> lock(done_mutex_);
    if (--remaining_ == 0) done_cv_.notify_all();
  }

  std::vector<std::vector<int>> parents_, children_;
  std::unique_ptr<ThreadPool> pool_;
  std::mutex run_mutex_;
  std::vector<std::atomic<int>> pending_parents_;
  std::mutex done_mutex_;
  std::condition_variable done_cv_;
  int remaining_ = 0;
  std::atomic<bool> failed_{false};
  std::atomic<bool> op_returned_false_{false};
  std::exception_ptr error_;
};

}  // namespace

std::unique_ptr<NetBase> CreateDAGNet(const NetDef& def, Workspace* ws) {
  return std::make_unique<DAGNet>(def, ws);
}

}  // namespace caffe2
