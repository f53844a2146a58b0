// ArgMax / ArgMin: [X] -> [indices (int64)], the position of the largest / smallest value along
// `axis` (-1), the first one on ties (spec ops §1.3). keepdims (1) keeps the reduced axis with
// size 1. float, double, int32, int64 inputs. NO_GRADIENT.
#include "core/gradient.h"
#include "operators/index/arg_max_op.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {
namespace {

template <bool kMax>
class ArgOp final : public Operator<CPUContext> {
 public:
  ArgOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        axis_(GetSingleArgument<int>("axis", -1)),
        keepdims_(GetSingleArgument<bool>("keepdims", true)) {}

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    switch (X.dtype()) {
      case DataType::FLOAT:
        return Compute<float>(X);
      case DataType::DOUBLE:
        return Compute<double>(X);
      case DataType::INT32:
        return Compute<int32_t>(X);
      case DataType::INT64:
        return Compute<int64_t>(X);
      default:
        C2_THROW("unsupported input type ", X.meta().name);
    }
  }

 private:
  template <class T>
  bool Compute(const Tensor& X) {
    const ArgView v = MakeArgView(X, axis_, keepdims_);
    const int64_t outer = v.outer, n = v.n, inner = v.inner;
    Tensor* Y = Output(0);
    Y->Resize(v.out_dims);
    const T* x = X.data<T>();
    int64_t* y = Y->mutable_data<int64_t>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const T* base = x + o * n * inner + i;
        int64_t best = 0;
        for (int64_t k = 1; k < n; ++k) {
          if (kMax ? base[k * inner] > base[best * inner] : base[k * inner] < base[best * inner])
            best = k;
        }
        y[o * inner + i] = best;
      }
    }
    return true;
  }

  int axis_;
  bool keepdims_;
};

std::vector<TensorShape> ArgInference(const OperatorDef& def, const std::vector<TensorShape>& in) {
  ArgumentHelper args(def);
  const int ndim = in[0].dims_size();
  int axis = args.GetSingleArgument<int>("axis", -1);
  TensorShape out;
  out.set_data_type(TensorProto::INT64);
  if (axis < -ndim || axis >= ndim) {
    out.set_unknown_shape(true);
    return {out};
  }
  if (axis < 0) axis += ndim;
  const bool keepdims = args.GetSingleArgument<bool>("keepdims", true);
  for (int i = 0; i < ndim; ++i) {
    if (i != axis) {
      out.add_dims(in[0].dims(i));
    } else if (keepdims) {
      out.add_dims(1);
    }
  }
  return {out};
}

}  // namespace

REGISTER_CPU_OPERATOR(ArgMax, ArgOp<true>);
OPERATOR_SCHEMA(ArgMax)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(ArgInference)
    .Arg("axis", "Axis to reduce (-1)")
    .Arg("keepdims", "Keep the reduced axis with size 1 (true)")
    .SetDoc("Index of the largest value along an axis.");
REGISTER_GRADIENT(ArgMax, NoGradient);

REGISTER_CPU_OPERATOR(ArgMin, ArgOp<false>);
OPERATOR_SCHEMA(ArgMin)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(ArgInference)
    .Arg("axis", "Axis to reduce (-1)")
    .Arg("keepdims", "Keep the reduced axis with size 1 (true)")
    .SetDoc("Index of the smallest value along an axis.");
REGISTER_GRADIENT(ArgMin, NoGradient);

}  // namespace caffe2
