// Squeeze:    [X] -> [Y], drops the size-1 dims listed in `dims` (ints, required; sorted and
//             deduplicated; each must be 1). Allow in-place 0->0. Gradient: ExpandDims(dY), same
//             dims.
// ExpandDims: [X] -> [Y], inserts size-1 dims so that they sit at the positions `dims` of Y
//             (ints, required). Allow in-place 0->0. Gradient: Squeeze(dY), same dims.
// In place, Y is X with new dims wherever X lives. Written once for both devices: the data moves
// through CopyTensorData (tensor_util.h, tensor_util_cuda.h).
#pragma once

#include <vector>

#include "operators/tensor/tensor_util.h"

namespace caffe2 {

// The `dims` argument sorted and deduplicated; an error when it is missing.
std::vector<int64_t> SortedDims(const OperatorBase& op);
// X's dims without the listed (sorted) ones, each of which must be 1.
std::vector<int64_t> SqueezeDims(const std::vector<int64_t>& in, const std::vector<int64_t>& dims);
// X's dims with size-1 dims inserted at the listed (sorted) positions of the result.
std::vector<int64_t> ExpandDims(std::vector<int64_t> in, const std::vector<int64_t>& dims);

template <class Context, bool kSqueeze>
class SqueezeOp final : public Operator<Context> {
 public:
  SqueezeOp(const OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), dims_(SortedDims(*this)) {}
  bool RunOnDevice() override {
    const Tensor& X = this->Input(0);
    std::vector<int64_t> dims =
        kSqueeze ? SqueezeDims(X.dims(), dims_) : ExpandDims(X.dims(), dims_);
    Tensor* Y = DimsOutput(this, 0, 0);
    if (!this->IsInputOutputAlias(0, 0)) CopyTensorData(&this->context_, X, Y);
    Y->Reshape(dims);
    return true;
  }

 private:
  std::vector<int64_t> dims_;
};

}  // namespace caffe2
