// ReduceSum / ReduceMean: [X] -> [Y], X summed (averaged) over `axes` (ints; all axes when empty;
// negative values count from the end; duplicates ignored). With `keepdims` (1) the reduced axes
// stay as size-1 dims, else they are dropped. The mean of an empty extent is an error (the sum is
// 0). float, double. No gradient yet: asking for one is an error (upstream
// GRADIENT_NOT_IMPLEMENTED_YET).
#include <Eigen/Core>
#include <algorithm>
#include <utility>
#include <vector>

#include "core/gradient.h"
#include "core/operator.h"
#include "operators/common/elementwise_cpu.h"
#include "operators/reduce/reduce_op.h"

namespace caffe2 {
namespace {

// Sums x over `axes` into y. When the reduced axes form one contiguous run (after dropping size-1
// dims), X is an (outer, r, inner) array and Eigen's vectorised column sums do the work; other
// patterns walk X once, adding each element to its output slot.
template <class T>
void ReduceSumLoop(const std::vector<int64_t>& dims, const std::vector<int>& axes, const T* x, T* y,
                   int64_t y_size) {
  const int nd = static_cast<int>(dims.size());
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  std::fill(y, y + y_size, T(0));
  if (total == 0) return;
  // Group sizes of alternating kept / reduced runs.
  std::vector<std::pair<bool, int64_t>> groups;
  for (int i = 0; i < nd; ++i) {
    if (dims[i] == 1) continue;
    const bool reduced = std::binary_search(axes.begin(), axes.end(), i);
    if (!groups.empty() && groups.back().first == reduced)
      groups.back().second *= dims[i];
    else
      groups.push_back({reduced, dims[i]});
  }
  int runs = 0;
  for (const auto& g : groups) runs += g.first;
  if (runs <= 1) {
    int64_t outer = 1, r = 1, inner = 1;
    bool seen = false;
    for (const auto& g : groups) {
      if (g.first) {
        r = g.second;
        seen = true;
      } else if (seen)
        inner *= g.second;
      else
        outer *= g.second;
    }
    using Matrix = Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    using Row = Eigen::Array<T, 1, Eigen::Dynamic>;
    for (int64_t o = 0; o < outer; ++o) {
      Eigen::Map<const Matrix> block(x + o * r * inner, r, inner);
      Eigen::Map<Row>(y + o * inner, inner) = block.colwise().sum();
    }
    return;
  }
  // Output stride of every input dim (0 for reduced dims); walk X in order with a counter.
  std::vector<int64_t> ostride(nd, 0);
  int64_t s = 1;
  for (int i = nd - 1; i >= 0; --i) {
    if (!std::binary_search(axes.begin(), axes.end(), i)) {
      ostride[i] = s;
      s *= dims[i];
    }
  }
  std::vector<int64_t> idx(nd, 0);
  const int64_t inner = dims[nd - 1], inner_stride = ostride[nd - 1];
  int64_t off = 0;
  for (int64_t base = 0; base < total; base += inner) {
    for (int64_t k = 0; k < inner; ++k) y[off + k * inner_stride] += x[base + k];
    for (int i = nd - 2; i >= 0; --i) {
      off += ostride[i];
      if (++idx[i] < dims[i]) break;
      off -= ostride[i] * dims[i];
      idx[i] = 0;
    }
  }
}

template <bool kMean>
class ReduceOp final : public Operator<CPUContext> {
 public:
  ReduceOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        axes_(GetRepeatedArgument<int>("axes")),
        keepdims_(GetSingleArgument<int>("keepdims", 1) != 0) {}
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const std::vector<int> axes = ResolveAxes(axes_, X.dims());
    if (kMean) CheckMeanExtent(X, axes);
    const std::vector<int64_t> out_dims = ReducedDims(X.dims(), axes, keepdims_);
    int64_t count = 1;
    for (int a : axes) count *= X.dims()[a];
    const bool ok = DispatchType(X.meta(), FloatTypes{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = X.template data<T>();
      Tensor* Y = Output(0);
      Y->Resize(out_dims);
      T* y = Y->template mutable_data<T>();
      ReduceSumLoop(X.dims(), axes, x, y, Y->numel());
      if (kMean && count > 0) {
        const T inv = T(1) / static_cast<T>(count);
        for (int64_t i = 0; i < Y->numel(); ++i) y[i] *= inv;
      }
    });
    C2_ENFORCE(ok, "unsupported type ", X.meta().name, " (supported: float, double)");
    return true;
  }

 private:
  std::vector<int> axes_;
  bool keepdims_;
};

class GradientNotImplementedYet final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    C2_THROW("[", Def().type(), "] gradient is not implemented yet");
  }
};

std::vector<TensorShape> InferReduce(const OperatorDef& def, const std::vector<TensorShape>& in) {
  ArgumentHelper args(def);
  const std::vector<int64_t> dims(in.at(0).dims().begin(), in.at(0).dims().end());
  const std::vector<int> axes = ResolveAxes(args.GetRepeatedArgument<int>("axes"), dims);
  TensorShape out;
  out.set_data_type(in.at(0).data_type());
  for (int64_t d : ReducedDims(dims, axes, args.GetSingleArgument<int>("keepdims", 1) != 0)) {
    out.add_dims(d);
  }
  return {out};
}

}  // namespace

REGISTER_CPU_OPERATOR(ReduceSum, ReduceOp<false>);
OPERATOR_SCHEMA(ReduceSum)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(InferReduce)
    .SetDoc("Sum of X over `axes` (all when empty); keepdims keeps them as size-1 dims.")
    .Arg("axes", "ints, default all axes")
    .Arg("keepdims", "int, default 1");
REGISTER_GRADIENT(ReduceSum, GradientNotImplementedYet);

REGISTER_CPU_OPERATOR(ReduceMean, ReduceOp<true>);
OPERATOR_SCHEMA(ReduceMean)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(InferReduce)
    .SetDoc("Mean of X over `axes` (all when empty); keepdims keeps them as size-1 dims.")
    .Arg("axes", "ints, default all axes")
    .Arg("keepdims", "int, default 1");
REGISTER_GRADIENT(ReduceMean, GradientNotImplementedYet);

}  // namespace caffe2
