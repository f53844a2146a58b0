#include "core/device_sync.h"

#include <atomic>
#include <exception>

#include "core/flags.h"
#include "core/logging.h"

C2_DEFINE_bool(caffe2_sync_device_each_op, false,
               "Wait for every device op's work before the next op runs (no deferred device "
               "synchronization in simple nets): asynchronous device errors name their op.");

namespace caffe2 {
namespace {

thread_local bool deferring = false;
std::atomic<void (*)()> sync_handler{nullptr};

}  // namespace

void SetDeferredDeviceSyncHandler(void (*handler)()) { sync_handler = handler; }

DeferDeviceSync::DeferDeviceSync() {
  if (deferring || FLAGS_caffe2_sync_device_each_op) return;
  deferring = true;
  owner_ = true;
}

void DeferDeviceSync::Finish() {
  if (!owner_) return;
  owner_ = false;
  deferring = false;
  if (auto handler = sync_handler.load()) handler();
}

DeferDeviceSync::~DeferDeviceSync() {
  try {
    Finish();
  } catch (const std::exception& e) {
    C2_LOG(Error) << "Device work queued before an error also failed: " << e.what();
  }
}

bool DeferDeviceSync::Active() { return deferring; }

}  // namespace caffe2
