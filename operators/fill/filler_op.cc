#include "operators/fill/filler_op.h"

namespace caffe2 {

FillerOp::FillerOp(const OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      extra_shape_(GetRepeatedArgument<int64_t>("extra_shape")),
      input_as_shape_(GetSingleArgument<bool>("input_as_shape", false)) {
  const ArgumentHelper args(def);
  if (const Argument* shape = args.Find("shape")) {
    C2_ENFORCE(!shape->has_i() && !shape->has_f(),
               "'shape' must be a list of ints, got a single value");
    shape_ = GetRepeatedArgument<int64_t>("shape");
  }
  if (InputSize() == 0) {
    C2_ENFORCE(extra_shape_.empty(), "'extra_shape' needs an input to extend");
    C2_ENFORCE(!input_as_shape_, "'input_as_shape' needs an input holding the shape");
  } else {
    C2_ENFORCE(!args.HasArgument("shape"), "'shape' cannot be given together with an input; ",
               "use 'extra_shape' to extend the input's shape");
  }
}

bool FillerOp::RunOnDevice() {
  std::vector<int64_t> dims;
  if (InputSize() == 0) {
    dims = shape_;
  } else if (input_as_shape_) {
    const Tensor& in = Input(0);
    C2_ENFORCE(in.ndim() == 1 && in.IsType<int64_t>(),
               "with input_as_shape=1 the input must be a 1-D int64 tensor, got ",
               in.DebugString());
    const int64_t* data = in.data<int64_t>();
    dims.assign(data, data + in.numel());
  } else {
    dims = Input(0).dims();
  }
  dims.insert(dims.end(), extra_shape_.begin(), extra_shape_.end());
  Tensor* out = Output(0);
  out->Resize(dims);
  if (out->device().type == kCPU) {
    Fill(out);
    return true;
  }
  // Other devices: fill on the host, then copy over (fills run once, at initialisation).
  Tensor staging;
  staging.Resize(dims);
  Fill(&staging);
  out->CopyFrom(staging);
  return true;
}

OpSchema& AddFillerArgs(OpSchema& schema) {
  return schema
      .Arg("shape",
           "(list of int) the output dims when there is no input ([] or absent: a 0-d tensor); "
           "not with an input")
      .Arg("extra_shape",
           "(list of int, default []) dims appended to the input's dims (or to the dims it holds "
           "with input_as_shape); needs an input")
      .Arg("input_as_shape",
           "(bool, default 0) the input is a 1-D int64 tensor holding the output dims; needs an "
           "input")
      .Arg("run_once",
           "(bool) accepted for upstream's tutorials, which pass run_once=0; a fill runs every "
           "time its net runs");
}

std::vector<TensorShape> FillerTensorInference(const OperatorDef& def,
                                               const std::vector<TensorShape>& inputs) {
  ArgumentHelper args(def);
  TensorShape out;
  int dtype = args.GetSingleArgument<int>("dtype", TensorProto::FLOAT);
  if (!args.HasArgument("dtype") && def.type() == "ConstantFill") {
    const Argument* value = args.Find("value");
    if (value && value->has_i()) dtype = TensorProto::INT64;
    if (value && value->has_s()) dtype = TensorProto::STRING;
  }
  out.set_data_type(static_cast<TensorProto::DataType>(dtype));
  if (inputs.empty()) {
    for (int64_t d : args.GetRepeatedArgument<int64_t>("shape")) out.add_dims(d);
  } else if (args.GetSingleArgument<bool>("input_as_shape", false)) {
    out.set_unknown_shape(true);
    return {out};
  } else {
    for (int64_t d : inputs[0].dims()) out.add_dims(d);
  }
  for (int64_t d : args.GetRepeatedArgument<int64_t>("extra_shape")) out.add_dims(d);
  return {out};
}

}  // namespace caffe2
