// Deferred device synchronization, the simple net's way to keep a GPU busy.
//
// A device operator normally waits for its device work before Run returns (the context's
// FinishDeviceComputation). Inside a DeferDeviceSync scope on a thread, it only checks that its
// work was queued (launch errors still surface at the op) and returns; Finish() (or the scope's
// end) waits for all device work the thread queued and reports an asynchronous device error.
// This is safe because the ops of one thread share one stream per device, so they run in order;
// copies between devices wait for the source device's stream; and memory freed inside the scope
// is reused only by the same thread (same stream) until Finish (the CUDA caching allocator).
// Executors whose ops run on several threads (the DAG nets) do not defer.
//
// --caffe2_sync_device_each_op=1 turns deferral off, so an asynchronous device error is reported
// by the op that caused it.
#pragma once

namespace caffe2 {

class DeferDeviceSync {
 public:
  // Defers on this thread unless a scope is already open (then the outer scope finishes).
  DeferDeviceSync();
  // Finishes if Finish was not called; an error is then logged, not thrown.
  ~DeferDeviceSync();
  DeferDeviceSync(const DeferDeviceSync&) = delete;
  DeferDeviceSync& operator=(const DeferDeviceSync&) = delete;

  // Waits for the thread's queued device work; throws on a device error. Ends the deferral.
  void Finish();
  // Whether device ops of the calling thread may return before their work is done.
  static bool Active();

 private:
  bool owner_ = false;
};

// Installed by a device backend (libcaffe2_cuda): waits for the calling thread's queued work and
// throws on a device error. Without a backend, Finish has nothing to wait for.
void SetDeferredDeviceSyncHandler(void (*handler)());

}  // namespace caffe2
