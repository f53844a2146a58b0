// While: [condition (one-element bool), any blobs the nets use] -> [any blobs they write]; runs
// cond_net (optional NetDef argument), then stops when the condition is false, else runs loop_net
// (required) and starts over. Both nets run in the op's own workspace and are made once, with the
// op. A net whose run returns false stops the loop and the op fails. No gradient here.
#include "core/gradient.h"
#include "core/net.h"
#include "operators/control/control_condition.h"

namespace caffe2 {
namespace {

class WhileOp final : public Operator<CPUContext> {
 public:
  WhileOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        loop_net_(CreateSubnet(*this, "loop_net", true)),
        cond_net_(CreateSubnet(*this, "cond_net", false)) {}
  bool RunOnDevice() override {
    while (true) {
      if (cond_net_ && !cond_net_->Run()) return false;
      // Input(0) again each time: the nets may have resized or replaced the condition.
      if (!ReadCondition(*this, Input(0), &scratch_)) return true;
      if (!loop_net_->Run()) return false;
    }
  }

 private:
  std::unique_ptr<NetBase> loop_net_;
  std::unique_ptr<NetBase> cond_net_;
  Tensor scratch_;
};

}  // namespace

REGISTER_CPU_OPERATOR(While, WhileOp);
REGISTER_CUDA_OPERATOR(While, WhileOp);
OPERATOR_SCHEMA(While)
    .NumInputs(1, OpSchema::kInf)
    .NumOutputs(0, OpSchema::kInf)
    .AllowInplace([](int, int) { return true; })  // a blob the nets read and write
    .Arg("loop_net", "NetDef run while the condition holds", true)
    .Arg("cond_net", "NetDef run before each test of the condition (optional)")
    .Input(0, "condition", "one-element bool tensor")
    .SetDoc("Runs loop_net while a one-element bool condition holds.");
REGISTER_GRADIENT(While, NoGradient);

}  // namespace caffe2
