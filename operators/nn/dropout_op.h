// Dropout's and DropoutGrad's arguments and input checks, shared by the CPU kernels (dropout_op.cc,
// which holds the contract) and the CUDA kernels (dropout_op.cu), so both devices refuse the same
// defs and inputs with the same messages.
#pragma once

#include "core/operator.h"

namespace caffe2 {

// `ratio` (0.5, in [0, 1)) and `is_test` (0).
struct DropoutArgs {
  float ratio = 0.5f;
  bool is_test = false;
};

inline DropoutArgs ReadDropoutArgs(const OperatorBase& op) {
  DropoutArgs args;
  args.ratio = op.GetSingleArgument<float>("ratio", 0.5f);
  args.is_test = op.GetSingleArgument<int>("is_test", 0) != 0;
  C2_ENFORCE(args.ratio >= 0 && args.ratio < 1, "ratio must be in [0, 1), got ", args.ratio);
  return args;
}

// Dropout: training writes the mask, so it needs the second output.
inline void CheckDropoutOutputs(const OperatorBase& op, const DropoutArgs& args) {
  C2_ENFORCE(args.is_test || op.OutputSize() == 2,
             "training (is_test=0) needs the mask output, got ", op.OutputSize(), " output(s)");
}

inline void CheckDropoutInput(const Tensor& X) {
  C2_ENFORCE(X.IsType<float>(), "float input expected, got ", X.meta().name);
}

// DropoutGrad: [dY] in test mode, [dY, mask] in training.
inline void CheckDropoutGradInputCount(const OperatorBase& op, const DropoutArgs& args) {
  C2_ENFORCE(op.InputSize() == (args.is_test ? 1 : 2),
             args.is_test ? "test mode takes [dY]" : "training takes [dY, mask]", ", got ",
             op.InputSize(), " input(s)");
}

inline void CheckDropoutGradInputs(const Tensor& dY, const Tensor& mask) {
  C2_ENFORCE(dY.IsType<float>(), "dY must be float, got ", dY.meta().name);
  C2_ENFORCE(mask.IsType<bool>() && mask.dims() == dY.dims(),
             "mask must be bool and shaped like dY ", Tensor::DimsString(dY.dims()), ", got ",
             mask.meta().name, " ", Tensor::DimsString(mask.dims()));
}

}  // namespace caffe2
