// CUDA kernel of Pow (contract, schema and gradient maker in pow_op.cc): a scalar `exponent`, or an
// exponent tensor with the legacy broadcast (run by the binary template of elementwise_cuda.cuh);
// float and double.
#include <memory>

#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {
namespace {

using CudaPowTypes = TypeList<float, double>;

struct PowScalar {
  float exponent;
  template <class T>
  __device__ T operator()(T x) const {
    return pow(x, static_cast<T>(exponent));
  }
};

class CudaPowOp final : public Operator<CUDAContext> {
 public:
  CudaPowOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws), has_exponent_(PowHasExponentArgument(*this)) {
    if (has_exponent_) {
      scalar_ = std::make_unique<CudaUnaryOp<PowScalar, CudaPowTypes>>(
          def, ws, PowScalar{GetSingleArgument<float>("exponent", 0.f)});
    } else {
      tensor_ = std::make_unique<CudaBinaryOp<functors::Pow, CudaPowTypes, false>>(def, ws);
    }
  }
  bool RunOnDevice() override { return has_exponent_ ? scalar_->Run() : tensor_->Run(); }

 private:
  bool has_exponent_;
  std::unique_ptr<OperatorBase> scalar_, tensor_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(Pow, CudaPowOp);

}  // namespace caffe2
