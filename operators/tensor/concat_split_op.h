// Concat / Split (spec ops §1.2.9); DepthConcat / DepthSplit are the same ops under older names.
//
// Concat: [X0, X1, ...] -> [concat_result, split_info]. Inputs share dtype and all dims but the
//   axis; the result joins them along `axis`. split_info is a CPU int32 tensor holding each
//   input's extent along the axis. With add_axis=1 the inputs have identical shapes and are
//   stacked along a new axis (split_info is then all ones).
// Split: [X, split?] -> [Y0, ..., Yk-1]. Cuts X along `axis` into pieces of the sizes in `split`
//   (ints, or the optional int input, which wins), equal pieces by default. With add_axis=1 every
//   piece has size 1 and the axis is dropped from the outputs.
// Axis: `axis` (int, negative counts from the end) or `order` (NCHW -> 1, NHWC -> 3); giving
//   both is an error; neither means axis 1.
// Gradients: Concat -> Split [dY, split_info] -> [dX0, ...]; Split -> Concat of the output
//   gradients -> [dX, "_" + dX + "_dims"] (a missing output gradient is zero-filled first).
#pragma once

#include "core/operator.h"

namespace caffe2 {

// The axis a Concat/Split def selects, before range checks.
int ConcatSplitAxis(const OperatorBase& op);

class ConcatOp final : public Operator<CPUContext> {
 public:
  ConcatOp(const OperatorDef& def, Workspace* ws);
  bool RunOnDevice() override;

 private:
  int axis_;
  bool add_axis_;
};

class SplitOp final : public Operator<CPUContext> {
 public:
  SplitOp(const OperatorDef& def, Workspace* ws);
  bool RunOnDevice() override;

 private:
  int axis_;
  bool add_axis_;
  std::vector<int64_t> split_;
};

}  // namespace caffe2
