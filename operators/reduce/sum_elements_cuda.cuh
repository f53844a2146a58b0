// The CUDA sum SumElements and SumSqrElements share (sum_elements_op.cu, sum_sqr_elements_op.cu;
// contracts in sum_elements_op.cc and sum_sqr_elements_op.cc): one block sums the whole tensor (or
// its squares), accumulating in double like the CPU kernels; `average` divides by the count.
#pragma once

#include <type_traits>
#include <vector>

#include "core/cuda/cuda_context.h"
#include "core/operator.h"
#include "operators/common/elementwise_cpu.h"  // TypeList, DispatchType
#include "operators/common/reduce_cuda.cuh"
#include "operators/reduce/sum_elements_op.h"

namespace caffe2 {

template <class T, bool kSquare>
struct ReadElementValue {
  const T* x;
  __device__ double operator()(int64_t i, int64_t) const {
    const double v = x[i];
    return kSquare ? v * v : v;
  }
};

template <bool kSquare>
class CudaSumElementsOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const bool average = GetSingleArgument<bool>("average", false);
    CheckSumElementsAverage(X, average);
    using Types = std::conditional_t<kSquare, TypeList<float, double>, TypeList<float>>;
    const bool ok = DispatchType(X.meta(), Types{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor* Y = Output(0);
      Y->Resize(std::vector<int64_t>{});
      const double scale = average ? 1.0 / static_cast<double>(X.numel()) : 1.0;
      SumOver<double>(1, 1, X.numel(), ReadElementValue<T, kSquare>{X.template data<T>()}, scale,
                      Y->template mutable_data<T>(), context_.stream());
    });
    C2_ENFORCE(ok, "unsupported type ", X.meta().name, " (supported: ", TypeNames(Types{}), ")");
    return true;
  }
};

}  // namespace caffe2
