#include "operators/io/prefetch_op.h"

namespace caffe2 {

PrefetchOperator::PrefetchOperator(const OperatorDef& def, Workspace* ws)
    : OperatorBase(def, ws), no_prefetch_(GetSingleArgument<bool>("no_prefetch", false)) {}

PrefetchOperator::~PrefetchOperator() {
  // Subclasses must have called Finalize(); this is only the last line of defence, since by now
  // the worker may be running a Prefetch() of a destroyed subclass.
  Finalize();
}

void PrefetchOperator::Finalize() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finalizing_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void PrefetchOperator::WorkerLoop() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [this] { return !prefetched_ || finalizing_; });
      if (finalizing_) return;
    }
    std::exception_ptr error;
    try {
      Prefetch();
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = error;
      prefetched_ = true;
    }
    cv_.notify_all();
  }
}

bool PrefetchOperator::RunOnDevice() {
  if (no_prefetch_) {
    Prefetch();
    CopyPrefetched();
    return true;
  }
  if (!worker_.joinable()) worker_ = std::thread([this] { WorkerLoop(); });
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [this] { return prefetched_; });
  // Whatever happens below, the worker may start on the next batch once we are done here.
  struct Release {
    PrefetchOperator* op;
    ~Release() {
      op->prefetched_ = false;
      op->cv_.notify_all();
    }
  } release{this};
  if (error_) {
    std::exception_ptr error = error_;
    error_ = nullptr;
    std::rethrow_exception(error);
  }
  CopyPrefetched();
  return true;
}

}  // namespace caffe2
