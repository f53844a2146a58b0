// Structured fillers (spec ops §1.2.12), with FillerOp's shape rules (filler_op.h):
// RangeFill     -             float 0, 1, 2, ... in row-major order
// DiagonalFill  value, dtype  `value` on the main diagonal (rank >= 2; rank > 2 needs equal dims),
//                             zeros elsewhere; dtype as in ConstantFill (an int value without
//                             dtype gives INT64)
// LengthsRangeFill (not a FillerOp): [lengths (int32, 1-D)] -> [int32], the ranges 0..l-1 of every
//                             length, concatenated.
// All NO_GRADIENT.
#pragma once

#include "operators/fill/filler_op.h"

namespace caffe2 {

class RangeFillOp final : public FillerOp {
 public:
  using FillerOp::FillerOp;

 protected:
  void Fill(Tensor* out) override;
};

class DiagonalFillOp final : public FillerOp {
 public:
  DiagonalFillOp(const OperatorDef& def, Workspace* ws);

 protected:
  void Fill(Tensor* out) override;

 private:
  template <class T>
  void FillTyped(Tensor* out, T value);
  DataType dtype_ = DataType::FLOAT;
  double value_ = 0;
};

}  // namespace caffe2
