// Slice: [X, starts?, ends?] -> [Y] (spec ops §1.3). starts/ends (ints, as arguments or as two
// 1-D int inputs, which may live on the host or a GPU) give one range per leading dim of X; dims
// past them are kept whole. An index i < 0 means dim + 1 + i, so -1 is the end. Any element type.
// SliceGradient: [X, (starts, ends), dY] -> [dX], zeros with dY written into the sliced region
// (only X's dims are read).
// On CUDA both are one strided copy (operators/common/strided_copy.h) on the op's stream.
#pragma once

#include <vector>

#include "operators/tensor/tensor_util.h"

namespace caffe2 {

// The sliced region of a tensor of `dims`: its first index and its size along every dim.
struct Box {
  std::vector<int64_t> start, size;
};

Box SliceBox(const std::vector<int64_t>& dims, const std::vector<int64_t>& starts,
             const std::vector<int64_t>& ends);

// SliceGradient's dY: the size of the sliced region.
inline void CheckSliceGradient(const Tensor& dY, const Box& box) {
  C2_ENFORCE(dY.dims() == box.size, "dY ", Tensor::DimsString(dY.dims()),
             " does not match the slice ", Tensor::DimsString(box.size));
}

// Reads the ranges of Slice and SliceGradient (from the arguments, or from inputs 1 and 2 when
// the op has inputs_without_ranges + 2 inputs).
template <class Context>
class SliceBase : public Operator<Context> {
 public:
  SliceBase(const OperatorDef& def, Workspace* ws, int inputs_without_ranges)
      : Operator<Context>(def, ws),
        starts_(this->template GetRepeatedArgument<int64_t>("starts")),
        ends_(this->template GetRepeatedArgument<int64_t>("ends")),
        ranges_as_inputs_(this->InputSize() == inputs_without_ranges + 2) {
    C2_ENFORCE(!(ranges_as_inputs_ && (this->HasArgument("starts") || this->HasArgument("ends"))),
               "give starts/ends either as arguments or as inputs, not both");
  }

 protected:
  Box GetBox(const std::vector<int64_t>& dims) {
    if (ranges_as_inputs_) {
      return SliceBox(dims, IntValues(OnHost(this->Input(1), &host_starts_), "starts"),
                      IntValues(OnHost(this->Input(2), &host_ends_), "ends"));
    }
    return SliceBox(dims, starts_, ends_);
  }

 private:
  std::vector<int64_t> starts_, ends_;
  bool ranges_as_inputs_;
  Tensor host_starts_, host_ends_;
};

}  // namespace caffe2
