// Tile: [X, tiles?, axis?] -> [Y] (spec ops §1.3): X repeated `tiles` times along `axis`
// (arguments tiles (1) and axis (0), or one-element int inputs that override them; those may live
// on the host or a GPU). Y.dims[axis] = X.dims[axis] * tiles. Any element type.
// TileGradient: [dY, (tiles, axis)] -> [dX], the sum of the tiles (float), added in tile order.
// On CUDA, Tile is one strided copy (operators/common/strided_copy.h) and TileGradient one thread
// per dX element, both on the op's stream.
#pragma once

#include <utility>

#include "operators/tensor/tensor_util.h"

namespace caffe2 {

// TileGradient's dY: float, its `axis` dim a multiple of `tiles`.
inline void CheckTileGradient(const Tensor& dY) {
  C2_ENFORCE(dY.IsType<float>(), "dY must be float, got ", dY.DebugString());
}
inline void CheckTileGradientTiles(const Tensor& dY, int64_t tiles, int axis) {
  C2_ENFORCE(tiles > 0 && dY.dim(axis) % tiles == 0, "dY ", Tensor::DimsString(dY.dims()), " dim ",
             axis, " is not a multiple of tiles ", tiles);
}

template <class Context>
class TileBase : public Operator<Context> {
 public:
  TileBase(const OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        tiles_(this->template GetSingleArgument<int64_t>("tiles", 1)),
        axis_(this->template GetSingleArgument<int>("axis", 0)) {}

 protected:
  // (tiles, axis) for a tensor of rank ndim, from the inputs after the first when present.
  std::pair<int64_t, int> Params(int ndim) {
    const int64_t tiles =
        this->InputSize() > 1 ? ScalarInt(OnHost(this->Input(1), &host_tiles_), "tiles") : tiles_;
    const int axis = this->InputSize() > 2
                         ? static_cast<int>(ScalarInt(OnHost(this->Input(2), &host_axis_), "axis"))
                         : axis_;
    C2_ENFORCE(tiles >= 0, "tiles must be non-negative, got ", tiles);
    return {tiles, CanonicalAxis(axis, ndim)};
  }

 private:
  int64_t tiles_;
  int axis_;
  Tensor host_tiles_, host_axis_;
};

}  // namespace caffe2
