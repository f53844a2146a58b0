// Reshape: [X, new_shape?] -> [Y, old_shape] (spec ops §1.3). The new dims come from the `shape`
// argument (ints) or from the 1-D int input, never both. A 0 keeps the input's dim at that
// position; one -1 is inferred from the element count. old_shape is a 1-D int64 tensor of X's dims
// that lives on the host on every device (the CUDA op too, as upstream). Allow in-place 0->0: Y is
// then X with new dims, wherever X lives. Gradient: Reshape [dY, old_shape] -> [dX, "_" + dX +
// "_dims"], with no arguments copied.
//
// ReshapeOp is written once for both devices: the data moves through CopyTensorData
// (tensor_util.h, tensor_util_cuda.h), and a new_shape input on a GPU is read through a host copy.
#pragma once

#include <vector>

#include "operators/tensor/tensor_util.h"

namespace caffe2 {

// Resolves 0 and -1 entries of `shape` against `in` (element count `numel`).
std::vector<int64_t> ResolveShape(const std::vector<int64_t>& in, int64_t numel,
                                  std::vector<int64_t> shape);

template <class Context>
class ReshapeOp final : public Operator<Context> {
 public:
  ReshapeOp(const OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), shape_(this->template GetRepeatedArgument<int64_t>("shape")) {
    C2_ENFORCE(this->InputSize() == 1 || !this->HasArgument("shape"),
               "give the new shape either as the 'shape' argument or as input 1, not both");
    C2_ENFORCE(this->InputSize() == 2 || this->HasArgument("shape"),
               "the new shape is missing: give the 'shape' argument or a second input");
  }

  bool RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const std::vector<int64_t> old_dims = X.dims();
    const std::vector<int64_t> shape = ResolveShape(
        old_dims, X.numel(),
        this->InputSize() == 2 ? IntValues(OnHost(this->Input(1), &host_shape_), "new_shape")
                               : shape_);
    Tensor* old_shape = this->OutputBlob(1)->GetMutableTensor(Device{kCPU, 0});
    old_shape->Resize(static_cast<int64_t>(old_dims.size()));
    int64_t* o = old_shape->template mutable_data<int64_t>();
    for (size_t i = 0; i < old_dims.size(); ++i) o[i] = old_dims[i];
    Tensor* Y = DimsOutput(this, 0, 0);
    if (!this->IsInputOutputAlias(0, 0)) CopyTensorData(&this->context_, X, Y);
    Y->Reshape(shape);
    return true;
  }

 private:
  std::vector<int64_t> shape_;
  Tensor host_shape_;
};

}  // namespace caffe2
