// PrefetchOperator: the base of the input ops that prepare the next batch in the background
// (ops spec §2.5), such as TensorProtosDBInput and ImageInput.
//
// A subclass implements three steps:
//   ReadInputs()     on the net's thread: take from the input blobs what the next batch needs (the
//                    raw records of a DBReader). Only here may the op touch its inputs, since only
//                    during Run() are they sure to exist: a reader blob replaced while the net
//                    lives (an init net run twice) must never be read by a background thread.
//   Prefetch()       on the worker thread: turn those inputs into the batch, in the subclass's own
//                    buffers (parsing, decoding, augmenting); throw on error.
//   CopyPrefetched() on the net's thread: copy the prepared batch into the outputs.
// The first Run() reads the first batch's inputs and starts one worker thread; every Run() waits
// for the batch in flight, copies it out and reads the inputs of the next one, so exactly one batch
// is prepared while the net runs.
//
// Errors: an exception thrown by Prefetch() (on the worker, or rethrown by a subclass from its own
// decode threads) is carried to the next Run(), which throws it with the original message; the next
// batch is then already on its way. Nothing is lost and Run() never waits forever.
//
// Readers: inputs are read one batch ahead, so a DBReader serialized between runs stands after the
// batch in flight (a resumed run skips that batch); use no_prefetch for exact resumes.
//
// Shutdown: every subclass destructor must call Finalize() first, so the worker stops (after the
// batch it is preparing) while the subclass's members still exist. Argument `no_prefetch` (bool,
// default false) runs the three steps inline in Run() instead.
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
  // Takes what the next batch needs from the inputs (net thread, worker idle).
  virtual void ReadInputs() {}
  // Prepares the next batch into the subclass's buffers (worker thread; no input blobs).
  virtual void Prefetch() = 0;
  // Copies the prepared batch into the outputs (net thread, worker idle).
  virtual void CopyPrefetched() = 0;
  // Stops and joins the worker; safe to call more than once.
  void Finalize();

  bool RunOnDevice() final;

 private:
  void WorkerLoop();
  void StartNext();  // with mutex_ held

  const bool no_prefetch_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool in_flight_ = false;   // inputs were read; the worker prepares (or has prepared) the batch
  bool prefetched_ = false;  // the batch in flight (or its error) is ready for Run()
  bool finalizing_ = false;
  std::exception_ptr error_;
  std::thread worker_;
};

}  // namespace caffe2
