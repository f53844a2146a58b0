// PrefetchOperator: the base of the input ops that prepare the next batch in the background
// (ops spec §2.5), such as TensorProtosDBInput and ImageInput.
//
// A subclass implements Prefetch() (fill its own host-side buffers with the next batch; throw on
// error) and CopyPrefetched() (copy those buffers into the outputs). The first Run() starts one
// worker thread that calls Prefetch(); each Run() waits for the batch in flight, copies it out and
// lets the worker start on the next one, so exactly one batch is prepared ahead while the net runs.
//
// Errors: an exception thrown by Prefetch() (on the worker, or rethrown by a subclass from its own
// decode threads) is carried to the next Run(), which throws it with the original message; the
// worker then goes on to prepare the batch after. Nothing is lost and Run() never waits forever.
//
// Readers: the worker reads one batch ahead, so a DBReader serialized while the op runs stands
// after the batch in flight (a resumed run skips that batch); use no_prefetch for exact resumes.
// The input blobs must outlive the op: replacing a reader blob (e.g. rerunning CreateDB into it)
// while a net holding a prefetching op on it exists is undefined; destroy the net first.
//
// Shutdown: every subclass destructor must call Finalize() first, so the worker stops (after the
// batch it is preparing) while the subclass's members still exist. Argument `no_prefetch` (bool,
// default false) runs Prefetch() and CopyPrefetched() inline in Run() instead.
#pragma once

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "core/operator.h"

namespace caffe2 {

class PrefetchOperator : public OperatorBase {
 public:
  PrefetchOperator(const OperatorDef& def, Workspace* ws);
  ~PrefetchOperator() override;

 protected:
  // Prepares the next batch into the subclass's buffers. Runs on the worker thread, never
  // concurrently with CopyPrefetched().
  virtual void Prefetch() = 0;
  // Copies the prepared batch into the outputs (on the thread that runs the net).
  virtual void CopyPrefetched() = 0;
  // Stops and joins the worker; safe to call more than once.
  void Finalize();

  bool RunOnDevice() final;

 private:
  void WorkerLoop();

  const bool no_prefetch_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool prefetched_ = false;  // a batch (or its error) is ready for Run()
  bool finalizing_ = false;
  std::exception_ptr error_;
  std::thread worker_;
};

}  // namespace caffe2
