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
      cv_.wait(lock, [this] { return (in_flight_ && !prefetched_) || finalizing_; });
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

void PrefetchOperator::StartNext() {
  ReadInputs();
  in_flight_ = true;
  prefetched_ = false;
  cv_.notify_all();
}

bool PrefetchOperator::RunOnDevice() {
  if (no_prefetch_) {
    ReadInputs();
    Prefetch();
    CopyPrefetched();
    return true;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  if (!worker_.joinable()) worker_ = std::thread([this] { WorkerLoop(); });
  // Nothing in flight (first run, or the inputs of the next batch could not be read last time):
  // read them now; an error here is this run's error.
  if (!in_flight_) StartNext();
  cv_.wait(lock, [this] { return prefetched_; });
  in_flight_ = false;
  std::exception_ptr error = error_;
  error_ = nullptr;
  if (!error) CopyPrefetched();  // if this throws, the next Run() starts over
  try {
    StartNext();
  } catch (...) {
    // Reported by the next Run(), which reads the inputs again; this run's batch is good.
    if (!error) return true;
  }
  if (error) std::rethrow_exception(error);
  return true;
}

}  // namespace caffe2
