// The "simple" net: ops run in order on the calling thread; the first failure stops the run.
// Device ops defer their synchronization to the end of the run (core/device_sync.h).
#include "core/device_sync.h"
#include "core/logging.h"
#include "core/net.h"
#include "core/net_executors.h"

namespace caffe2 {
namespace {

class SimpleNet final : public NetBase {
 public:
  using NetBase::NetBase;

 protected:
  bool RunImpl() override {
    DeferDeviceSync deferred;
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (!RunOp(static_cast<int>(i))) return false;
    }
    deferred.Finish();
    return true;
  }
};

}  // namespace

std::unique_ptr<NetBase> CreateSimpleNet(const NetDef& def, Workspace* ws) {
  auto net = std::make_unique<SimpleNet>(def, ws);
  C2_LOG(Info) << "Created net '" << def.name() << "': simple executor, " << def.op_size()
               << " ops in order";
  return net;
}

}  // namespace caffe2
