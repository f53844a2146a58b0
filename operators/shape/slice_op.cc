// Slice, SliceGradient: schemas, gradient and the CPU kernels (contracts in slice_op.h).
#include "operators/shape/slice_op.h"

#include <algorithm>

#include "core/gradient.h"

namespace caffe2 {

Box SliceBox(const std::vector<int64_t>& dims, const std::vector<int64_t>& starts,
             const std::vector<int64_t>& ends) {
  C2_ENFORCE(starts.size() == ends.size(), "starts has ", starts.size(), " entries but ends has ",
             ends.size());
  C2_ENFORCE(starts.size() <= dims.size(), "starts/ends have ", starts.size(),
             " entries but X has ", dims.size(), " dims");
  Box box{std::vector<int64_t>(dims.size(), 0), dims};
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t s = starts[i] < 0 ? dims[i] + 1 + starts[i] : starts[i];
    const int64_t e = ends[i] < 0 ? dims[i] + 1 + ends[i] : ends[i];
    C2_ENFORCE(s >= 0 && s <= dims[i] && e >= s && e <= dims[i], "slice [", starts[i], ", ",
               ends[i], ") of dim ", i, " is out of range for X ", Tensor::DimsString(dims));
    box.start[i] = s;
    box.size[i] = e - s;
  }
  return box;
}

namespace {

// Copies between a full tensor of `dims` and its box, in either direction.
void CopyBox(const TypeMeta& meta, const std::vector<int64_t>& dims, const Box& box,
             const char* src, char* dst, bool to_box) {
  const int nd = static_cast<int>(dims.size());
  int64_t count = 1;
  for (int64_t s : box.size) count *= s;
  if (count == 0) return;
  if (nd == 0) {
    CopyItems(meta, 1, src, dst);
    return;
  }
  const int64_t row = box.size[nd - 1];
  std::vector<int64_t> stride(nd, 1);
  for (int i = nd - 2; i >= 0; --i) stride[i] = stride[i + 1] * dims[i + 1];
  std::vector<int64_t> idx(nd, 0);
  const size_t item = meta.itemsize;
  for (int64_t r = 0, done = 0; done < count; ++r, done += row) {
    int64_t full = 0;
    for (int i = 0; i < nd; ++i) full += (box.start[i] + idx[i]) * stride[i];
    const int64_t boxed = r * row;
    if (to_box) {
      CopyItems(meta, row, src + full * item, dst + boxed * item);
    } else {
      CopyItems(meta, row, src + boxed * item, dst + full * item);
    }
    for (int i = nd - 2; i >= 0; --i) {
      if (++idx[i] < box.size[i]) break;
      idx[i] = 0;
    }
  }
}

class SliceOp final : public SliceBase<CPUContext> {
 public:
  SliceOp(const OperatorDef& def, Workspace* ws) : SliceBase(def, ws, 1) {}
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Box box = GetBox(X.dims());
    Tensor* Y = Output(0);
    Y->Resize(box.size);
    CopyBox(X.meta(), X.dims(), box, static_cast<const char*>(X.raw_data()),
            static_cast<char*>(Y->raw_mutable_data(X.meta())), true);
    return true;
  }
};

class SliceGradientOp final : public SliceBase<CPUContext> {
 public:
  SliceGradientOp(const OperatorDef& def, Workspace* ws) : SliceBase(def, ws, 2) {}
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& dY = Input(InputSize() - 1);
    const Box box = GetBox(X.dims());
    CheckSliceGradient(dY, box);
    Tensor* dX = Output(0);
    dX->Resize(X.dims());
    char* dx = static_cast<char*>(dX->raw_mutable_data(dY.meta()));
    std::fill(dx, dx + dX->nbytes(), 0);
    CopyBox(dY.meta(), X.dims(), box, static_cast<const char*>(dY.raw_data()), dx, false);
    return true;
  }
};

class GetSliceGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    std::vector<std::string> inputs{I(0)};
    if (Def().input_size() == 3) {
      inputs.push_back(I(1));
      inputs.push_back(I(2));
    }
    inputs.push_back(GO(0));
    return SingleGradientDef("SliceGradient", "", inputs, {GI(0)});
  }
};

std::vector<TensorShape> SliceInference(const OperatorDef& def,
                                        const std::vector<TensorShape>& in) {
  TensorShape out = in[0];
  if (in.size() > 1) {
    out.set_unknown_shape(true);
    return {out};
  }
  ArgumentHelper args(def);
  try {
    const Box box = SliceBox(std::vector<int64_t>(in[0].dims().begin(), in[0].dims().end()),
                             args.GetRepeatedArgument<int64_t>("starts"),
                             args.GetRepeatedArgument<int64_t>("ends"));
    for (size_t i = 0; i < box.size.size(); ++i) out.set_dims(static_cast<int>(i), box.size[i]);
  } catch (const EnforceNotMet&) {
    out.set_unknown_shape(true);
  }
  return {out};
}

}  // namespace

REGISTER_CPU_OPERATOR(Slice, SliceOp);
OPERATOR_SCHEMA(Slice)
    .NumInputs({1, 3})
    .NumOutputs(1)
    .TensorInference(SliceInference)
    .Arg("starts", "First index per dim (negative: dim + 1 + i)")
    .Arg("ends", "End index per dim, exclusive (-1: the end)")
    .SetDoc("Takes a box out of a tensor.");
REGISTER_GRADIENT(Slice, GetSliceGradient);
REGISTER_CPU_OPERATOR(SliceGradient, SliceGradientOp);
OPERATOR_SCHEMA(SliceGradient)
    .NumInputs({2, 4})
    .NumOutputs(1)
    .SetDoc("The gradient of Slice: [X, (starts, ends), dY] -> [dX], zero outside the box.")
    .Arg("starts", "(list of int) the forward op's first index per dim (negative: dim + 1 + i)")
    .Arg("ends", "(list of int) the forward op's end index per dim, exclusive (-1: the end)");

}  // namespace caffe2
