// Input checks shared by the operator families (CPU and CUDA kernels alike). Each error names the
// input and what it holds; the op's own type prefixes the message (core/operator.h).
#pragma once

#include "core/enforce.h"
#include "core/tensor.h"

namespace caffe2 {

// `t`, the input called `name`, holds floats.
inline void CheckFloat(const Tensor& t, const char* name) {
  C2_ENFORCE(t.IsType<float>(), name, " must be a float tensor, got ", t.meta().name, " ",
             Tensor::DimsString(t.dims()));
}

}  // namespace caffe2
