// CUDA kernels of Clip and ClipGradient: the functors and `min`/`max` arguments of the CPU op
// (clip_op.cc, which holds the contract, schema and gradient maker).
#include "operators/common/elementwise_cuda.cuh"
#include "operators/unary/unary_args.h"

namespace caffe2 {
namespace {

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

}  // namespace

REGISTER_CUDA_OPERATOR(Clip, CudaClipOp);
REGISTER_CUDA_OPERATOR(ClipGradient, CudaClipGradientOp);

}  // namespace caffe2
