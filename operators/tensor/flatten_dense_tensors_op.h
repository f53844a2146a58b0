// FlattenDenseTensors / UnflattenDenseTensors: pack several dense tensors into one contiguous
// buffer and back. data_parallel_model uses the pair for gradient bucketing (one Gloo Allreduce
// on the buffer instead of one per small gradient).
//
//   FlattenDenseTensors:   [X1, ..., Xk] -> [buffer]
//     buffer is 1-D with sum(numel(Xi)) elements of the common dtype of the Xi (all inputs must
//     share it; fixed-size types only), holding X1's elements, then X2's, ... in order.
//   UnflattenDenseTensors: [buffer, X1, ..., Xk] -> [X1, ..., Xk]   (output i must be input i+1)
//     copies the consecutive chunks of buffer back into the Xi, which keep their shapes.
//     numel(buffer) must equal sum(numel(Xi)) and the dtypes must match.
//
// Pointer stability: the buffer has the same size every run, so its storage is allocated once and
// reused (Tensor keeps its capacity on a same-size Resize); the Xi are written in place. That is
// what the Gloo ops need (they enforce the same data pointers on every run).
// The kernels only move bytes through CopyBytes, so the same classes serve CPU and CUDA.
// No gradients.
#pragma once

#include "core/operator.h"

namespace caffe2 {

class FlattenDenseTensorsOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override;
};

class UnflattenDenseTensorsOp final : public Operator<CPUContext> {
 public:
  UnflattenDenseTensorsOp(const OperatorDef& def, Workspace* ws);
  bool RunOnDevice() override;
};

}  // namespace caffe2
