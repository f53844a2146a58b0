// Pow: [X] -> [Y] with the float argument `exponent`, Y = X^exponent; or [X, E] -> [Y], Y = X^E
// with the legacy broadcast of E (broadcast, axis, axis_str, order). float, double. Y may be X or
// (without broadcast) E. Spec ops §1.2.17.
// Gradient, scalar exponent e: Pow(X, e - 1) -> dX, Mul([dX, dY]) -> dX, Scale(dX, e) -> dX; when Y
// overwrote X, Y^((e-1)/e) stands in for X^(e-1) (exact for X > 0) and goes to "<dX>_autogen_pow"
// (upstream writes it to dX, which then clobbers dY: the in-place gradient is wrong there).
// Gradient, tensor exponent (no in-place): dX = E X^(E-1) dY and dE = log(X) Y dY, built from
// ConstantFill, Sub, Pow, Mul and Log, dE reduced by SumReduceLike when broadcasting.
#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class PowOp final : public Operator<CPUContext> {
 public:
  PowOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        has_exponent_(PowHasExponentArgument(*this)),
        exponent_(GetSingleArgument<float>("exponent", 0.f)),
        args_(ReadBroadcastArgs(ArgumentHelper(def))) {}
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const bool ok = DispatchType(X.meta(), FloatTypes{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = X.template data<T>();
      if (has_exponent_) {
        const T e = static_cast<T>(exponent_);
        Tensor* Y = Output(0);
        Y->Resize(X.dims());
        UnaryLoop(X.numel(), x, Y->template mutable_data<T>(), [e](T v) { return std::pow(v, e); });
        return;
      }
      const Tensor& E = Input(1);
      C2_ENFORCE(!(args_.broadcast && IsInputOutputAlias(1, 0)),
                 "in-place with E as the output is not allowed when broadcasting");
      C2_ENFORCE(E.meta() == X.meta(), "X has type ", X.meta().name, " but E has ", E.meta().name);
      const BroadcastSizes sizes = ComputeBroadcastSizes(X.dims(), E.dims(), args_);
      const T* e = E.template data<T>();
      Tensor* Y = Output(0);
      Y->Resize(X.dims());
      BinaryLoop(sizes, x, e, Y->template mutable_data<T>(), functors::Pow());
    });
    C2_ENFORCE(ok, "unsupported type ", X.meta().name, " (supported: float, double)");
    return true;
  }

 private:
  bool has_exponent_;
  float exponent_;
  BroadcastArgs args_;
};

class GetPowGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  bool CopyArguments() const override { return false; }
  std::vector<OperatorDef> GetGradientDefs() override {
    ArgumentHelper args(Def());
    if (args.HasArgument("exponent")) {
      const float e = args.GetSingleArgument<float>("exponent", 0.f);
      const bool in_place = I(0) == O(0);
      const std::string base = in_place ? O(0) : I(0);
      const float p = in_place ? (e - 1.f) / e : e - 1.f;
      C2_ENFORCE(!in_place || e != 0.f, "[Pow] no gradient for in-place Pow with exponent 0");
      // In place, dY and dX share one name, so X^(e-1) goes to a scratch blob first.
      const std::string power = in_place ? GI(0) + "_autogen_pow" : GI(0);
      return {CreateOperatorDef("Pow", "", {base}, {power}, {MakeArgument<float>("exponent", p)}),
              CreateOperatorDef("Mul", "", {power, GO(0)}, {GI(0)}),
              CreateOperatorDef("Scale", "", {GI(0)}, {GI(0)}, {MakeArgument<float>("scale", e)})};
    }
    C2_ENFORCE(I(0) != O(0) && I(1) != O(0),
               "[Pow] no gradient for in-place Pow with a tensor "
               "exponent (output '",
               O(0), "' overwrites an input)");
    const std::vector<Argument> bcast =
        PresentArguments(Def(), {"broadcast", "axis", "axis_str", "order"});
    const bool broadcast = args.GetSingleArgument<int>("broadcast", 0) != 0;
    const std::string dE = broadcast ? GI(1) + "_autogen_pre_red" : GI(1);
    std::vector<OperatorDef> ops = {
        CreateOperatorDef("ConstantFill", "", {I(1)}, {GI(1)}, {MakeArgument<float>("value", 1.f)}),
        CreateOperatorDef("Sub", "", {I(1), GI(1)}, {GI(1)}),
        CreateOperatorDef("Pow", "", {I(0), GI(1)}, {GI(0)}, bcast),
        CreateOperatorDef("Mul", "", {GI(0), I(1)}, {GI(0)}, bcast),
        CreateOperatorDef("Mul", "", {GI(0), GO(0)}, {GI(0)}),
        CreateOperatorDef("Log", "", {I(0)}, {dE}),
        CreateOperatorDef("Mul", "", {dE, O(0)}, {dE}),
        CreateOperatorDef("Mul", "", {dE, GO(0)}, {dE})};
    if (broadcast) {
      ops.push_back(CreateOperatorDef("SumReduceLike", "", {dE, I(1)}, {GI(1)},
                                      PresentArguments(Def(), {"axis", "axis_str", "order"})));
    }
    return ops;
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Pow, PowOp);
OPERATOR_SCHEMA(Pow)
    .NumInputs(1, 2)
    .NumOutputs(1)
    .AllowInplace({{0, 0}, {1, 0}})
    .IdenticalTypeAndShapeOfInput(0)
    .SetDoc("Y = X^exponent, or X^E with E broadcast over X (broadcast, axis, axis_str, order).")
    .Arg("exponent", "(float) the exponent when there is no second input; not with input 1");
static OpSchema& c2_pow_args [[maybe_unused]] = AddBroadcastArgs(c2_op_schema_Pow);
REGISTER_GRADIENT(Pow, GetPowGradient);

}  // namespace caffe2
