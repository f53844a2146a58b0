// Operator templates shared by the elementwise ops: each op's .cc picks a functor from
// operators/common/elementwise_functors.h and a type list, and registers the result.
//
// UnaryOp<F, Types, Loop>:    [X] -> [Y], Y = F(X), same shape and type; Loop is PlainUnaryLoop
//                             or EigenUnaryLoop (operators/common/elementwise_eigen.h).
// UnaryGradientOp<F, Types, kDYInput>:
//                             [S, ..., dY] -> [dX], dX = F(S, dY); S is X or Y as the op says,
//                             dY is input kDYInput (1, or 2 where upstream's gradient op also
//                             takes an input it does not need, as SwishGradient's Y).
// BinaryOp<F, Types, bool>:   [A, B] -> [C], C = F(A, B) with the legacy broadcast of B
//                             (operators/common/broadcast.h); C has A's shape, and A's type
//                             or bool.
#pragma once

#include <type_traits>

#include "core/operator.h"
#include "operators/common/broadcast.h"
#include "operators/common/elementwise_cpu.h"
#include "operators/common/elementwise_functors.h"
#include "operators/common/elementwise_checks.h"

namespace caffe2 {

template <class F, class Types, class Loop = PlainUnaryLoop>
class UnaryOp : public Operator<CPUContext> {
 public:
  UnaryOp(const OperatorDef& def, Workspace* ws, F f = F())
      : Operator<CPUContext>(def, ws), f_(f) {}
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const bool ok = DispatchType(X.meta(), Types{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = X.template data<T>();
      Tensor* Y = Output(0);
      Y->Resize(X.dims());
      Loop::Run(X.numel(), x, Y->template mutable_data<T>(), f_);
    });
    C2_ENFORCE(ok, "unsupported type ", X.meta().name, " for X (supported: ", TypeNames(Types{}),
               ")");
    return true;
  }

 private:
  F f_;
};

template <class F, class Types, int kDYInput = 1>
class UnaryGradientOp : public Operator<CPUContext> {
 public:
  UnaryGradientOp(const OperatorDef& def, Workspace* ws, F f = F())
      : Operator<CPUContext>(def, ws), f_(f) {}
  bool RunOnDevice() override {
    const Tensor& S = Input(0);
    const Tensor& dY = Input(kDYInput);
    CheckUnaryGradientInputs(S, dY);
    const bool ok = DispatchType(S.meta(), Types{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* s = S.template data<T>();
      const T* dy = dY.template data<T>();
      Tensor* dX = Output(0);
      dX->Resize(S.dims());
      BroadcastSizes sizes;
      sizes.n = S.numel();
      BinaryLoop(sizes, s, dy, dX->template mutable_data<T>(), f_);
    });
    C2_ENFORCE(ok, "unsupported type ", S.meta().name, " (supported: ", TypeNames(Types{}), ")");
    return true;
  }

 private:
  F f_;
};

template <class F, class Types, bool kBoolOutput>
class BinaryOp : public Operator<CPUContext> {
 public:
  BinaryOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), args_(ReadBroadcastArgs(ArgumentHelper(def))) {}
  bool RunOnDevice() override {
    const Tensor& A = Input(0);
    const Tensor& B = Input(1);
    const BroadcastSizes sizes = CheckBinaryInputs(*this, A, B, args_);
    const bool ok = DispatchType(A.meta(), Types{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Out = std::conditional_t<kBoolOutput, bool, T>;
      const T* a = A.template data<T>();
      const T* b = B.template data<T>();
      if constexpr (std::is_same_v<F, functors::Div> && std::is_integral_v<T>) {
        for (int64_t i = 0; i < B.numel(); ++i) {
          C2_ENFORCE(b[i] != 0, "integer division by zero: B[", i, "] is 0");
        }
      }
      Tensor* C = Output(0);
      C->Resize(A.dims());
      BinaryLoop(sizes, a, b, C->template mutable_data<Out>(), F());
    });
    C2_ENFORCE(ok, "unsupported type ", A.meta().name, " (supported: ", TypeNames(Types{}), ")");
    return true;
  }

 private:
  BroadcastArgs args_;
};

// Shape inference of a broadcast binary op: C takes A's shape, and A's type or bool.
inline OpSchema::TensorInferenceFunction BinaryOutputInference(bool bool_output) {
  return [bool_output](const OperatorDef&, const std::vector<TensorShape>& in) {
    std::vector<TensorShape> out{in.at(0)};
    if (bool_output) out[0].set_data_type(TensorProto::BOOL);
    return out;
  };
}

// Copies the named arguments of `def` that are present (used by gradient makers that must not copy
// every argument).
inline std::vector<Argument> PresentArguments(const OperatorDef& def,
                                              const std::vector<std::string>& names) {
  std::vector<Argument> out;
  for (const std::string& name : names) {
    for (const Argument& a : def.arg()) {
      if (a.name() == name) out.push_back(a);
    }
  }
  return out;
}

}  // namespace caffe2
