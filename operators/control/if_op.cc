// If: [condition (one-element bool), any blobs the branches use (for the schedulers' dependency
// tracking)] -> [any blobs the branches write]; runs the NetDef argument then_net when the
// condition holds, else else_net (optional), in the op's own workspace. The branch nets are made
// once, with the op. No gradient here (upstream's If gradient, control_ops_grad, is not built).
#include "core/gradient.h"
#include "core/net.h"
#include "operators/control/control_condition.h"

namespace caffe2 {
namespace {

class IfOp final : public Operator<CPUContext> {
 public:
  IfOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        then_net_(CreateSubnet(*this, "then_net", true)),
        else_net_(CreateSubnet(*this, "else_net", false)) {}
  bool RunOnDevice() override {
    if (ReadCondition(*this, Input(0), &scratch_)) return then_net_->Run();
    return else_net_ ? else_net_->Run() : true;
  }

 private:
  std::unique_ptr<NetBase> then_net_;
  std::unique_ptr<NetBase> else_net_;
  Tensor scratch_;
};

}  // namespace

REGISTER_CPU_OPERATOR(If, IfOp);
REGISTER_CUDA_OPERATOR(If, IfOp);
OPERATOR_SCHEMA(If)
    .NumInputs(1, OpSchema::kInf)
    .NumOutputs(0, OpSchema::kInf)
    .AllowInplace([](int, int) { return true; })  // a blob the nets read and write
    .Arg("then_net", "NetDef run when the condition holds", true)
    .Arg("else_net", "NetDef run otherwise (optional)")
    .Input(0, "condition", "one-element bool tensor")
    .SetDoc("Runs then_net or else_net as a one-element bool condition says.");
REGISTER_GRADIENT(If, NoGradient);

}  // namespace caffe2
