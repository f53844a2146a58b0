// Concat / Split (spec ops §1.2.9); DepthConcat / DepthSplit are the same ops under older names.
//
// Concat: [X0, X1, ...] -> [concat_result, split_info]. Inputs share dtype and all dims but the
//   axis; the result joins them along `axis`. split_info is an int32 tensor holding each input's
//   extent along the axis; it lives on the host on every device (the CUDA op too, as upstream).
//   With add_axis=1 the inputs have identical shapes and are stacked along a new axis (split_info
//   is then all ones).
// Split: [X, split?] -> [Y0, ..., Yk-1]. Cuts X along `axis` into pieces of the sizes in `split`
//   (ints, or the optional int input, which wins; on the host or a GPU), equal pieces by default.
//   With add_axis=1 every piece has size 1 and the axis is dropped from the outputs.
// Axis: `axis` (int, negative counts from the end) or `order` (NCHW -> 1, NHWC -> 3); giving
//   both is an error; neither means axis 1.
// Gradients: Concat -> Split [dY, split_info] -> [dX0, ...]; Split -> Concat of the output
//   gradients -> [dX, "_" + dX + "_dims"] (a missing output gradient is zero-filled first).
// The CUDA ops (concat_split_op_cuda.cc) share the layouts below and move each input's or
// output's (outer, extent * inner) block with one cudaMemcpy2DAsync.
#pragma once

#include <vector>

#include "core/operator.h"

namespace caffe2 {

// The axis a Concat/Split def selects, before range checks.
int ConcatSplitAxis(const OperatorBase& op);

// Concat's output: dims, the axis, each input's extent along it, and the (outer, inner) sizes
// around it (the output is (outer, dims[axis] * inner); input i is (outer, sizes[i] * inner)).
// Checks the inputs' types and dims.
struct ConcatLayout {
  int axis = 0;
  std::vector<int64_t> dims;
  std::vector<int32_t> sizes;
  int64_t outer = 1, inner = 1;
};
ConcatLayout MakeConcatLayout(const std::vector<const Tensor*>& inputs, int axis_arg,
                              bool add_axis);
// split_info: the extents, as a 1-D int32 tensor.
void WriteSplitInfo(const ConcatLayout& layout, Tensor* split_info);

// Split's outputs for X cut into n pieces of `sizes` (empty: equal pieces) along axis_arg: each
// output's dims, the sizes, and the (outer, extent, inner) view of X. Checks the sizes.
struct SplitLayout {
  int axis = 0;
  std::vector<std::vector<int64_t>> dims;
  std::vector<int64_t> sizes;
  int64_t outer = 1, extent = 0, inner = 1;
};
SplitLayout MakeSplitLayout(const Tensor& X, int axis_arg, bool add_axis,
                            std::vector<int64_t> sizes, int n);

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
  Tensor host_split_;
};

}  // namespace caffe2
