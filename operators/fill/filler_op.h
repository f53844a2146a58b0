// FillerOp: the shared shape rules of every fill operator (spec ops §1.2.12).
//
// Inputs: none, or [like] (in-place 0->0 allowed). Output: [Y].
// - No input: Y has dims `shape` (ints; absent or [] gives a 0-d tensor); `extra_shape` and
//   `input_as_shape` are errors.
// - One input: `shape` must not be set; Y has the input's dims followed by `extra_shape`, or, with
//   input_as_shape=1, the dims stored in the 1-D int64 input, followed by `extra_shape`.
// Subclasses fill an already-resized CPU tensor; for an op on another device the host result is
// copied there, so every filler is device-generic. Fillers have no gradient.
#pragma once

#include <vector>

#include "core/operator.h"

namespace caffe2 {

class FillerOp : public Operator<CPUContext> {
 public:
  FillerOp(const OperatorDef& def, Workspace* ws);

 protected:
  bool RunOnDevice() final;
  virtual void Fill(Tensor* output) = 0;

 private:
  std::vector<int64_t> shape_;
  std::vector<int64_t> extra_shape_;
  bool input_as_shape_;
};

// Declares the shape arguments FillerOp reads (shape, extra_shape, input_as_shape) on a filler's
// schema and returns it; applied after the schema's chain, as the helpers of
// operators/conv/conv_pool_schema.h: `static OpSchema& x = AddFillerArgs(c2_op_schema_RangeFill);`.
OpSchema& AddFillerArgs(OpSchema& schema);

// Shape inference shared by fillers: dims as above, element type from `dtype` (default FLOAT).
std::vector<TensorShape> FillerTensorInference(const OperatorDef& def,
                                               const std::vector<TensorShape>& inputs);

}  // namespace caffe2
