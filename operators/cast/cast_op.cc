// Cast, FloatToHalf, HalfToFloat: schemas, gradients and the CPU kernels (contracts in
// cast_op.h).
#include "operators/cast/cast_op.h"

#include <algorithm>
#include <cctype>

#include "core/gradient.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {

DataType DataTypeArg(const ArgumentHelper& args, const std::string& name, DataType fallback) {
  const Argument* a = args.Find(name);
  if (!a) return fallback;
  if (a->has_i()) return static_cast<DataType>(a->i());
  C2_ENFORCE(a->has_s(), "'", name, "' must be a DataType int or name");
  std::string upper = a->s();
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  TensorProto::DataType t;
  C2_ENFORCE(TensorProto::DataType_Parse(upper, &t), "unknown data type name '", a->s(), "' for '",
             name, "'");
  return static_cast<DataType>(t);
}

DataType CastTarget(const OperatorDef& def) {
  const DataType to = DataTypeArg(ArgumentHelper(def), "to", DataType::FLOAT);
  C2_ENFORCE(to != DataType::STRING && to != DataType::UNDEFINED, "cannot cast to ",
             DataTypeName(to));
  TypeMeta::FromDataType(to);
  return to;
}

void CheckHalfFloatInput(const Tensor& X, bool to_half) {
  C2_ENFORCE(to_half ? X.IsType<float>() : X.IsType<float16>(), "expects a ",
             to_half ? "float" : "float16", " tensor, got ", X.DebugString());
}

namespace {

template <class T>
double ToDouble(T v) {
  return static_cast<double>(v);
}
template <>
double ToDouble<float16>(float16 v) {
  return HalfToFloat(v);
}
template <class T>
T FromDouble(double v) {
  return static_cast<T>(v);
}
template <>
float16 FromDouble<float16>(double v) {
  return FloatToHalf(static_cast<float>(v));
}
template <>
bool FromDouble<bool>(double v) {
  return v != 0;
}

template <class Src, class Dst>
void CastLoop(const Tensor& X, Tensor* Y) {
  const Src* x = X.data<Src>();
  Dst* y = Y->mutable_data<Dst>();
  for (int64_t i = 0; i < X.numel(); ++i) y[i] = FromDouble<Dst>(ToDouble<Src>(x[i]));
}

template <class Src>
void CastFrom(const Tensor& X, DataType to, Tensor* Y) {
  switch (to) {
    case DataType::FLOAT:
      return CastLoop<Src, float>(X, Y);
    case DataType::DOUBLE:
      return CastLoop<Src, double>(X, Y);
    case DataType::FLOAT16:
      return CastLoop<Src, float16>(X, Y);
    case DataType::INT32:
      return CastLoop<Src, int32_t>(X, Y);
    case DataType::INT64:
      return CastLoop<Src, int64_t>(X, Y);
    case DataType::INT16:
      return CastLoop<Src, int16_t>(X, Y);
    case DataType::INT8:
      return CastLoop<Src, int8_t>(X, Y);
    case DataType::UINT16:
      return CastLoop<Src, uint16_t>(X, Y);
    case DataType::UINT8:
    case DataType::BYTE:
      return CastLoop<Src, uint8_t>(X, Y);
    case DataType::BOOL:
      return CastLoop<Src, bool>(X, Y);
    default:
      C2_THROW("cannot cast to ", DataTypeName(to));
  }
}

void Cast(const Tensor& X, DataType to, Tensor* Y) {
  switch (X.dtype()) {
    case DataType::FLOAT:
      return CastFrom<float>(X, to, Y);
    case DataType::DOUBLE:
      return CastFrom<double>(X, to, Y);
    case DataType::FLOAT16:
      return CastFrom<float16>(X, to, Y);
    case DataType::INT32:
      return CastFrom<int32_t>(X, to, Y);
    case DataType::INT64:
      return CastFrom<int64_t>(X, to, Y);
    case DataType::INT16:
      return CastFrom<int16_t>(X, to, Y);
    case DataType::INT8:
      return CastFrom<int8_t>(X, to, Y);
    case DataType::UINT16:
      return CastFrom<uint16_t>(X, to, Y);
    case DataType::UINT8:
    case DataType::BYTE:
      return CastFrom<uint8_t>(X, to, Y);
    case DataType::BOOL:
      return CastFrom<bool>(X, to, Y);
    default:
      C2_THROW("cannot cast from ", X.meta().name);
  }
}

class CastOp final : public Operator<CPUContext> {
 public:
  CastOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), to_(CastTarget(def)) {}
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    Tensor* Y = Output(0);
    if (IsInputOutputAlias(0, 0)) {
      Tensor tmp;
      tmp.Resize(X.dims());
      Cast(X, to_, &tmp);
      Y->CopyFrom(tmp);
      return true;
    }
    Y->Resize(X.dims());
    Cast(X, to_, Y);
    return true;
  }

 private:
  DataType to_;
};

class GetCastGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  bool CopyArguments() const override { return false; }
  std::vector<OperatorDef> GetGradientDefs() override {
    ArgumentHelper args(Def());
    C2_ENFORCE(args.HasArgument("from_type"),
               "[Cast] the gradient needs the 'from_type' argument (the input's data type)");
    const DataType from = DataTypeArg(args, "from_type", DataType::FLOAT);
    const DataType to = DataTypeArg(args, "to", DataType::FLOAT);
    return SingleGradientDef("Cast", "", {GO(0)}, {GI(0)},
                             {MakeArgument<int>("to", static_cast<int>(from)),
                              MakeArgument<int>("from_type", static_cast<int>(to))});
  }
};

template <bool kToHalf>
class HalfFloatOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    CheckHalfFloatInput(X, kToHalf);
    Tensor* Y = Output(0);
    Y->Resize(X.dims());
    Cast(X, kToHalf ? DataType::FLOAT16 : DataType::FLOAT, Y);
    return true;
  }
};

template <const char* kOther>
class GetHalfFloatGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef(kOther, "", {GO(0)}, {GI(0)});
  }
};
constexpr char kFloatToHalf[] = "FloatToHalf";
constexpr char kHalfToFloat[] = "HalfToFloat";

std::vector<TensorShape> CastInference(const OperatorDef& def, const std::vector<TensorShape>& in) {
  TensorShape out = in[0];
  if (def.type() == "Cast") {
    out.set_data_type(static_cast<TensorProto::DataType>(
        DataTypeArg(ArgumentHelper(def), "to", DataType::FLOAT)));
  } else {
    out.set_data_type(def.type() == "FloatToHalf" ? TensorProto::FLOAT16 : TensorProto::FLOAT);
  }
  return {out};
}

}  // namespace

REGISTER_CPU_OPERATOR(Cast, CastOp);
OPERATOR_SCHEMA(Cast)
    .NumInputs(1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(CastInference)
    .Arg("to", "Target DataType (int or name), FLOAT by default")
    .Arg("from_type", "The input's DataType (needed for the gradient)")
    .SetDoc("Converts a tensor to another element type.");
REGISTER_GRADIENT(Cast, GetCastGradient);

REGISTER_CPU_OPERATOR(FloatToHalf, HalfFloatOp<true>);
OPERATOR_SCHEMA(FloatToHalf)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(CastInference)
    .SetDoc("float -> float16.");
REGISTER_GRADIENT(FloatToHalf, GetHalfFloatGradient<kHalfToFloat>);

REGISTER_CPU_OPERATOR(HalfToFloat, HalfFloatOp<false>);
OPERATOR_SCHEMA(HalfToFloat)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(CastInference)
    .SetDoc("float16 -> float.");
REGISTER_GRADIENT(HalfToFloat, GetHalfFloatGradient<kFloatToHalf>);

}  // namespace caffe2
