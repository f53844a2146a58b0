// CUDA registrations of the unary elementwise ops and their gradients: the same functors, type
// lists and arguments as their CPU ops (operators/elementwise/*_op.cc, which hold the schemas and
// gradient makers). Relu, Sigmoid and Tanh also have cuDNN variants (engine CUDNN,
// operators/nn/activation_ops_cudnn.cc).
#include "operators/common/elementwise_cuda.cuh"
#include "operators/elementwise/elementwise_args.h"

namespace caffe2 {
namespace {

// float16 on CUDA (computed in float) for the ops of fp16 training; the CPU ops take float types.
using CudaFloatTypes = TypeList<float, double, float16>;
using CudaNumericTypes = TypeList<float, double, int32_t, int64_t, float16>;

class CudaLeakyReluOp final : public CudaUnaryOp<functors::LeakyRelu, CudaFloatTypes> {
 public:
  CudaLeakyReluOp(const OperatorDef& def, Workspace* ws)
      : CudaUnaryOp(def, ws, {ReadLeakyReluAlpha(def)}) {}
};
class CudaLeakyReluGradientOp final
    : public CudaUnaryGradientOp<functors::LeakyReluGradient, CudaFloatTypes> {
 public:
  CudaLeakyReluGradientOp(const OperatorDef& def, Workspace* ws)
      : CudaUnaryGradientOp(def, ws, {ReadLeakyReluAlpha(def)}) {}
};
class CudaEluOp final : public CudaUnaryOp<functors::Elu, CudaFloatTypes> {
 public:
  CudaEluOp(const OperatorDef& def, Workspace* ws) : CudaUnaryOp(def, ws, {ReadEluAlpha(def)}) {}
};
class CudaEluGradientOp final : public CudaUnaryGradientOp<functors::EluGradient, CudaFloatTypes> {
 public:
  CudaEluGradientOp(const OperatorDef& def, Workspace* ws)
      : CudaUnaryGradientOp(def, ws, {ReadEluAlpha(def)}) {}
};
class CudaClipOp final : public CudaUnaryOp<functors::Clip, CudaFloatTypes> {
 public:
  CudaClipOp(const OperatorDef& def, Workspace* ws) : CudaUnaryOp(def, ws, ReadClip(def)) {}
};
class CudaClipGradientOp final
    : public CudaUnaryGradientOp<functors::ClipGradient, CudaFloatTypes> {
 public:
  CudaClipGradientOp(const OperatorDef& def, Workspace* ws)
      : CudaUnaryGradientOp(def, ws, {ReadClip(def).lo, ReadClip(def).hi}) {}
};
class CudaScaleOp final : public CudaUnaryOp<functors::Scale, CudaFloatTypes> {
 public:
  CudaScaleOp(const OperatorDef& def, Workspace* ws) : CudaUnaryOp(def, ws, {ReadScale(def)}) {}
};

}  // namespace

REGISTER_CUDA_OPERATOR(Relu, CudaUnaryOp<functors::Relu, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(ReluGradient, CudaUnaryGradientOp<functors::ReluGradient, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(Sigmoid, CudaUnaryOp<functors::Sigmoid, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(SigmoidGradient,
                       CudaUnaryGradientOp<functors::SigmoidGradient, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(Tanh, CudaUnaryOp<functors::Tanh, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(TanhGradient, CudaUnaryGradientOp<functors::TanhGradient, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(Abs, CudaUnaryOp<functors::Abs, CudaNumericTypes>);
REGISTER_CUDA_OPERATOR(AbsGradient, CudaUnaryGradientOp<functors::AbsGradient, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(Negative, CudaUnaryOp<functors::Negative, CudaNumericTypes>);
REGISTER_CUDA_OPERATOR(Exp, CudaUnaryOp<functors::Exp, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(Log, CudaUnaryOp<functors::Log, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(Sqrt, CudaUnaryOp<functors::Sqrt, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(Sqr, CudaUnaryOp<functors::Sqr, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(Softplus, CudaUnaryOp<functors::Softplus, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(SoftplusGradient,
                       CudaUnaryGradientOp<functors::SoftplusGradient, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(Softsign, CudaUnaryOp<functors::Softsign, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(SoftsignGradient,
                       CudaUnaryGradientOp<functors::SoftsignGradient, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(Not, CudaUnaryOp<functors::Not, TypeList<bool>>);
REGISTER_CUDA_OPERATOR(LeakyRelu, CudaLeakyReluOp);
REGISTER_CUDA_OPERATOR(LeakyReluGradient, CudaLeakyReluGradientOp);
REGISTER_CUDA_OPERATOR(Elu, CudaEluOp);
REGISTER_CUDA_OPERATOR(EluGradient, CudaEluGradientOp);
REGISTER_CUDA_OPERATOR(Clip, CudaClipOp);
REGISTER_CUDA_OPERATOR(ClipGradient, CudaClipGradientOp);
REGISTER_CUDA_OPERATOR(Scale, CudaScaleOp);

}  // namespace caffe2
