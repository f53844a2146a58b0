// The DNNL engine of ConvRelu (conv_relu_op.cc): DnnlConvOp with the relu as a post-op of the
// oneDNN convolution (conv_op_dnnl.h).
#include "operators/conv/conv_op_dnnl.h"

namespace caffe2 {
namespace {

class DnnlConvReluOp final : public DnnlConvOp {
 public:
  DnnlConvReluOp(const OperatorDef& def, Workspace* ws) : DnnlConvOp(def, ws, /*relu=*/true) {}
};

}  // namespace

REGISTER_CPU_OPERATOR(ConvRelu_ENGINE_DNNL, DnnlConvReluOp);

}  // namespace caffe2
