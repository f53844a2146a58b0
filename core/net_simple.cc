// The "simple" net: ops run in order on the calling thread; the first failure stops the run.
#include "core/net.h"

namespace caffe2 {
namespace {

class SimpleNet final : public NetBase {
 public:
  using NetBase::NetBase;

 protected:
  bool RunImpl() override {
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (!RunOp(static_cast<int>(i))) return false;
    }
    return true;
  }
};

}  // namespace

std::unique_ptr<NetBase> CreateSimpleNet(const NetDef& def, Workspace* ws) {
  return std::make_unique<SimpleNet>(def, ws);
}

}  // namespace caffe2
