// Random fillers (spec ops §1.2.12). All share FillerOp's shape rules (filler_op.h) and draw from
// the op context's generator, seeded by DeviceOption.random_seed, so two runs with the same seed
// fill the same values. NO_GRADIENT.
//
// GaussianFill       mean (0.0), std (1.0)          float normal
// UniformFill        min (0.0), max (1.0)           float uniform in [min, max). With three inputs
//                    [shape_src, min, max] the bounds come from the one-element float inputs; when
//                    min > max the output's first dim becomes 0.
// UniformIntFill     min (0), max (1)               int32 uniform in [min, max] (inclusive); three
//                    inputs as above with int32 bounds.
// XavierFill         -                              float uniform in ±sqrt(3 / fan_in),
//                                                   fan_in = numel / dim(0)
// MSRAFill           -                              float normal(0, sqrt(2 / fan_out)),
//                                                   fan_out = numel / dim(1)
// UniqueUniformFill  min, max, dtype (INT32|INT64)  distinct ints in [min, max]; an optional second
//                    input lists values to avoid.
#pragma once

#include "operators/fill/filler_op.h"

namespace caffe2 {

class GaussianFillOp final : public FillerOp {
 public:
  GaussianFillOp(const OperatorDef& def, Workspace* ws);

 protected:
  void Fill(Tensor* out) override;

 private:
  float mean_, std_;
};

template <class T>
class UniformFillOp final : public FillerOp {
 public:
  UniformFillOp(const OperatorDef& def, Workspace* ws);

 protected:
  void Fill(Tensor* out) override;

 private:
  T min_, max_;
};

class XavierFillOp final : public FillerOp {
 public:
  using FillerOp::FillerOp;

 protected:
  void Fill(Tensor* out) override;
};

class MSRAFillOp final : public FillerOp {
 public:
  using FillerOp::FillerOp;

 protected:
  void Fill(Tensor* out) override;
};

class UniqueUniformFillOp final : public FillerOp {
 public:
  UniqueUniformFillOp(const OperatorDef& def, Workspace* ws);

 protected:
  void Fill(Tensor* out) override;

 private:
  template <class T>
  void FillTyped(Tensor* out);
  int64_t min_, max_;
  DataType dtype_;
};

}  // namespace caffe2
