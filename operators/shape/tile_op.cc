// Tile, TileGradient: schemas, gradient and the CPU kernels (contracts in tile_op.h).
#include "operators/shape/tile_op.h"

#include <algorithm>

#include "core/gradient.h"

namespace caffe2 {
namespace {

class TileOp final : public TileBase<CPUContext> {
 public:
  using TileBase::TileBase;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const auto [tiles, axis] = Params(X.ndim());
    std::vector<int64_t> dims = X.dims();
    dims[axis] *= tiles;
    Tensor* Y = Output(0);
    Y->Resize(dims);
    const TypeMeta& meta = X.meta();
    const int64_t outer = X.size_to_dim(axis);
    const int64_t block = X.size_from_dim(axis);
    const char* x = static_cast<const char*>(X.raw_data());
    char* y = static_cast<char*>(Y->raw_mutable_data(meta));
    const size_t item = meta.itemsize;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t t = 0; t < tiles; ++t) {
        CopyItems(meta, block, x + o * block * item, y + (o * tiles + t) * block * item);
      }
    }
    return true;
  }
};

class TileGradientOp final : public TileBase<CPUContext> {
 public:
  using TileBase::TileBase;
  bool RunOnDevice() override {
    const Tensor& dY = Input(0);
    CheckTileGradient(dY);
    const auto [tiles, axis] = Params(dY.ndim());
    CheckTileGradientTiles(dY, tiles, axis);
    std::vector<int64_t> dims = dY.dims();
    dims[axis] /= tiles;
    Tensor* dX = Output(0);
    dX->Resize(dims);
    const int64_t outer = dY.size_to_dim(axis);
    const int64_t block = dX->size_from_dim(axis);
    const float* dy = dY.data<float>();
    float* dx = dX->mutable_data<float>();
    for (int64_t o = 0; o < outer; ++o) {
      float* out = dx + o * block;
      std::fill(out, out + block, 0.f);
      for (int64_t t = 0; t < tiles; ++t) {
        const float* in = dy + (o * tiles + t) * block;
        for (int64_t j = 0; j < block; ++j) out[j] += in[j];
      }
    }
    return true;
  }
};

class GetTileGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    std::vector<std::string> inputs{GO(0)};
    for (int i = 1; i < Def().input_size(); ++i) inputs.push_back(I(i));
    return SingleGradientDef("TileGradient", "", inputs, {GI(0)});
  }
};

std::vector<TensorShape> TileInference(const OperatorDef& def, const std::vector<TensorShape>& in) {
  TensorShape out = in[0];
  ArgumentHelper args(def);
  const int ndim = in[0].dims_size();
  int axis = args.GetSingleArgument<int>("axis", 0);
  if (in.size() > 1 || axis < -ndim || axis >= ndim) {
    out.set_unknown_shape(true);
    return {out};
  }
  if (axis < 0) axis += ndim;
  out.set_dims(axis, out.dims(axis) * args.GetSingleArgument<int64_t>("tiles", 1));
  return {out};
}

}  // namespace

REGISTER_CPU_OPERATOR(Tile, TileOp);
OPERATOR_SCHEMA(Tile)
    .NumInputs(1, 3)
    .NumOutputs(1)
    .TensorInference(TileInference)
    .Arg("tiles", "Number of copies (1)")
    .Arg("axis", "Axis to repeat along (0)")
    .SetDoc("Repeats a tensor along an axis.");
REGISTER_GRADIENT(Tile, GetTileGradient);
REGISTER_CPU_OPERATOR(TileGradient, TileGradientOp);
OPERATOR_SCHEMA(TileGradient)
    .NumInputs(1, 3)
    .NumOutputs(1)
    .SetDoc("The gradient of Tile: [dY, (tiles, axis)] -> [dX], the copies summed.")
    .Arg("tiles", "(int, default 1) the forward op's number of copies; input 1 replaces it")
    .Arg("axis", "(int, default 0) the forward op's axis; input 2 replaces it");

}  // namespace caffe2
