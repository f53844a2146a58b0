// Flatten:      [X] -> [Y], Y is 2-D (prod(X.dims[:axis]), prod(X.dims[axis:])); `axis` (1).
// FlattenToVec: [X] -> [Y], Y is 1-D (X.numel()).
// ResizeLike:   [X, like] -> [Y], X's data with like's dims (element counts must agree); allow
//               in-place 0->0 (Y is then X with new dims, wherever X lives). Only like's dims are
//               read, so it may live on any device.
// Gradients (spec ops §1.2.11, §1.2.13): Flatten and FlattenToVec -> ResizeLike [dY, X] -> [dX];
// ResizeLike: SHOULD_NOT_DO_GRADIENT.
// Written once for both devices: the data moves through CopyTensorData (tensor_util.h,
// tensor_util_cuda.h).
#pragma once

#include <vector>

#include "operators/tensor/tensor_util.h"

namespace caffe2 {

// Y = X's data with `dims` (X itself in place).
template <class Context>
void CopyWithDims(Operator<Context>* op, Context* context, const std::vector<int64_t>& dims) {
  const Tensor& X = op->Input(0);
  Tensor* Y = DimsOutput(op, 0, 0);
  if (!op->IsInputOutputAlias(0, 0)) CopyTensorData(context, X, Y);
  Y->Reshape(dims);
}

template <class Context>
class FlattenOp final : public Operator<Context> {
 public:
  FlattenOp(const OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), axis_(this->template GetSingleArgument<int>("axis", 1)) {}
  bool RunOnDevice() override {
    const Tensor& X = this->Input(0);
    C2_ENFORCE(axis_ >= 0 && axis_ <= X.ndim(), "axis ", axis_, " out of range for X ",
               Tensor::DimsString(X.dims()));
    CopyWithDims(this, &this->context_, {X.size_to_dim(axis_), X.size_from_dim(axis_)});
    return true;
  }

 private:
  int axis_;
};

template <class Context>
class FlattenToVecOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  bool RunOnDevice() override {
    CopyWithDims(this, &this->context_, {this->Input(0).numel()});
    return true;
  }
};

template <class Context>
class ResizeLikeOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const Tensor& like = this->Input(1);
    C2_ENFORCE(X.numel() == like.numel(), "X ", Tensor::DimsString(X.dims()), " has ", X.numel(),
               " elements but the shape source ", Tensor::DimsString(like.dims()), " has ",
               like.numel());
    CopyWithDims(this, &this->context_, like.dims());
    return true;
  }
};

}  // namespace caffe2
