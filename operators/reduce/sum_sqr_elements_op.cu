// CUDA kernel of SumSqrElements (contract in sum_sqr_elements_op.cc): the sum of squares of
// sum_elements_cuda.cuh, float or double.
#include "operators/reduce/sum_elements_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(SumSqrElements, CudaSumElementsOp<true>);

}  // namespace caffe2
