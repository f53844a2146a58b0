// ConvRelu: Conv followed by max(0, y), as one op: [X, filter, bias (optional)] -> [Y], with every
// argument, shape and engine of Conv (conv_op.h). What the FuseConvRelu transform
// (caffe2.python.net_transforms) puts in an inference net for a Conv whose output only a Relu
// reads; the DNNL engine (conv_relu_op_dnnl.cc) applies the relu as a post-op of the convolution,
// saving a pass over Y. No gradient: an op for inference nets.
#include "core/gradient.h"
#include "operators/conv/conv_op.h"
#include "operators/conv/conv_pool_schema.h"

namespace caffe2 {
namespace {

class ConvReluOp final : public ConvOp {
 public:
  ConvReluOp(const OperatorDef& def, Workspace* ws) : ConvOp(def, ws, /*relu=*/true) {}
};

}  // namespace

REGISTER_CPU_OPERATOR(ConvRelu, ConvReluOp);
REGISTER_CPU_OPERATOR(ConvRelu_ENGINE_EIGEN, ConvReluOp);
OPERATOR_SCHEMA(ConvRelu)
    .NumInputs(2, 3)
    .NumOutputs(1)
    .TensorInference(ConvInference)
    .CostInference(ConvCost)
    .Input(0, "X", "input (N, C, H, W) or (N, H, W, C)")
    .Input(1, "filter", "the filter, as Conv's")
    .Input(2, "bias", "optional (M) bias")
    .Output(0, "Y", "max(0, Conv(X, filter) + bias)")
    .SetDoc("Conv and Relu in one op (Conv's window arguments and group), for inference nets.")
    .Arg("group", "(int, default 1) channel groups, as Conv's; NCHW only, and no dilation")
    .Arg("exhaustive_search",
         "(bool, default 0) DNNL engine: time the variants on a shape's first run and keep the "
         "fastest (recorded in the autotune cache) instead of the fixed choice");
static OpSchema& c2_conv_relu_args [[maybe_unused]] = AddConvPoolArgs(c2_op_schema_ConvRelu);
REGISTER_GRADIENT(ConvRelu, ShouldNotDoGradient);

}  // namespace caffe2
