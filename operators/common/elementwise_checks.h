// Input checks shared by the CPU templates (elementwise_op_base.h), the CUDA templates
// (operators/common/elementwise_cuda.cuh) and DivGradient's kernels, so both devices refuse the
// same inputs with the same messages.
#pragma once

#include "core/operator.h"
#include "operators/common/broadcast.h"

namespace caffe2 {

// A unary gradient's saved input S (X or Y) and dY: same shape and type.
inline void CheckUnaryGradientInputs(const Tensor& S, const Tensor& dY) {
  C2_ENFORCE(S.dims() == dY.dims(), "input 0 ", Tensor::DimsString(S.dims()), " and dY ",
             Tensor::DimsString(dY.dims()), " must have the same shape");
  C2_ENFORCE(S.meta() == dY.meta(), "input 0 has type ", S.meta().name, " but dY has ",
             dY.meta().name);
}

// A broadcasting binary op's A and B: one type, B broadcastable; returns the (pre, n, post) view.
inline BroadcastSizes CheckBinaryInputs(const OperatorBase& op, const Tensor& A, const Tensor& B,
                                        const BroadcastArgs& args) {
  C2_ENFORCE(!(args.broadcast && op.IsInputOutputAlias(1, 0)),
             "in-place with B as the output is not allowed when broadcasting");
  C2_ENFORCE(A.meta() == B.meta(), "A has type ", A.meta().name, " but B has ", B.meta().name);
  return ComputeBroadcastSizes(A.dims(), B.dims(), args);
}

// Inputs first, first + 1, ... of `op` all have input first's shape and type (Max, Min, Mean and
// their gradients).
inline void CheckSameShapeAndType(const OperatorBase& op, int first) {
  const Tensor& ref = op.Input(first);
  for (int i = first + 1; i < op.InputSize(); ++i) {
    C2_ENFORCE(op.Input(i).dims() == ref.dims(), "input ", i, " has shape ",
               Tensor::DimsString(op.Input(i).dims()), " but input ", first, " has ",
               Tensor::DimsString(ref.dims()));
    C2_ENFORCE(op.Input(i).meta() == ref.meta(), "input ", i, " has type ", op.Input(i).meta().name,
               " but input ", first, " has ", ref.meta().name);
  }
}

// Sum's input i (i > 0) against input 0: the same shape and type.
inline void CheckSumInput(const OperatorBase& op, int i) {
  const Tensor& x0 = op.Input(0);
  const Tensor& xi = op.Input(i);
  C2_ENFORCE(xi.dims() == x0.dims(), "input ", i, " ('", op.debug_def().input(i), "') has shape ",
             Tensor::DimsString(xi.dims()), " but input 0 has ", Tensor::DimsString(x0.dims()));
  C2_ENFORCE(xi.meta() == x0.meta(), "input ", i, " has type ", xi.meta().name, " but input 0 has ",
             x0.meta().name);
}

// Pow takes its exponent as the float argument `exponent` or as input 1, never both.
inline bool PowHasExponentArgument(const OperatorBase& op) {
  const bool has_exponent = op.HasArgument("exponent");
  C2_ENFORCE(has_exponent != (op.InputSize() == 2),
             has_exponent ? "give the exponent as the argument or as input 1, not both"
                          : "needs the `exponent` argument or an exponent tensor as input 1");
  return has_exponent;
}

// DivGradient's [B, C, dC]: one shape and one type.
inline void CheckDivGradientInputs(const Tensor& B, const Tensor& C, const Tensor& dC) {
  C2_ENFORCE(B.dims() == C.dims() && C.dims() == dC.dims(), "B ", Tensor::DimsString(B.dims()),
             ", C ", Tensor::DimsString(C.dims()), " and dC ", Tensor::DimsString(dC.dims()),
             " must have the same shape");
  C2_ENFORCE(B.meta() == C.meta() && C.meta() == dC.meta(), "B, C and dC must share one type, got ",
             B.meta().name, ", ", C.meta().name, ", ", dC.meta().name);
}

}  // namespace caffe2
