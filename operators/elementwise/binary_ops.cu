// CUDA registrations of the binary elementwise ops with the legacy broadcast of B (spec ops
// §1.2.10): the functors and type lists of their CPU ops (add_op.cc, ..., which hold the schemas
// and gradient makers). Div on CUDA takes float types only: an integer division by zero cannot be
// reported from a kernel the way the CPU op reports it.
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {
namespace {

// float16 on CUDA (computed in float) for the ops of fp16 training; the CPU ops take float types.
using CudaFloatTypes = TypeList<float, double, float16>;
using CudaNumericTypes = TypeList<float, double, int32_t, int64_t, float16>;
using CudaNumericAndBoolTypes = TypeList<float, double, int32_t, int64_t, bool>;

}  // namespace

REGISTER_CUDA_OPERATOR(Add, CudaBinaryOp<functors::Add, CudaNumericTypes, false>);
REGISTER_CUDA_OPERATOR(Sub, CudaBinaryOp<functors::Sub, CudaNumericTypes, false>);
REGISTER_CUDA_OPERATOR(Mul, CudaBinaryOp<functors::Mul, CudaNumericTypes, false>);
REGISTER_CUDA_OPERATOR(Div, CudaBinaryOp<functors::Div, CudaFloatTypes, false>);
REGISTER_CUDA_OPERATOR(LT, CudaBinaryOp<functors::LT, CudaNumericAndBoolTypes, true>);
REGISTER_CUDA_OPERATOR(LE, CudaBinaryOp<functors::LE, CudaNumericAndBoolTypes, true>);
REGISTER_CUDA_OPERATOR(GT, CudaBinaryOp<functors::GT, CudaNumericAndBoolTypes, true>);
REGISTER_CUDA_OPERATOR(GE, CudaBinaryOp<functors::GE, CudaNumericAndBoolTypes, true>);
REGISTER_CUDA_OPERATOR(EQ, CudaBinaryOp<functors::EQ, CudaNumericAndBoolTypes, true>);
REGISTER_CUDA_OPERATOR(And, CudaBinaryOp<functors::And, TypeList<bool>, true>);
REGISTER_CUDA_OPERATOR(Or, CudaBinaryOp<functors::Or, TypeList<bool>, true>);
REGISTER_CUDA_OPERATOR(Xor, CudaBinaryOp<functors::Xor, TypeList<bool>, true>);

}  // namespace caffe2
