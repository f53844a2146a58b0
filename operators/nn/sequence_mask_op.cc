// SequenceMask: [input (float), lengths or window centers (int32, for modes sequence and window)]
// -> [masked], the input with masked elements set to fill_val (default -inf; 0 with grad = 1), as
// upstream's attention masks. The input is viewed as a matrix: the dims before `axis` (default 1)
// are its rows, the dims from `axis` on its columns. With `batch` = b (< axis) the dims before b
// are a batch, and lengths / centers hold one value per batch entry; without it, one per row.
// Element (i, j) of the matrix (row i, column j; k = i's batch entry or i itself) is masked when:
//   mode "sequence":  j >= lengths[k]
//   mode "window":    |j - centers[k]| > radius
//   mode "upper":     j < i       "lower":     j > i
//   mode "upperdiag": j <= i      "lowerdiag": j >= i      (i counted within the batch entry)
// repeat_from_axis = r (sequence mode, no batch): the mask is over the columns' dims [axis, r)
// and repeats over the dims from r on. The gradient is SequenceMask of dY with grad = 1 (the same
// mask, filled with 0).
#include <cmath>
#include <limits>
#include <string>

#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {
namespace {

enum class MaskMode { kSequence, kWindow, kUpper, kLower, kUpperDiag, kLowerDiag };

MaskMode ReadMode(const std::string& mode) {
  if (mode == "sequence") return MaskMode::kSequence;
  if (mode == "window") return MaskMode::kWindow;
  if (mode == "upper") return MaskMode::kUpper;
  if (mode == "lower") return MaskMode::kLower;
  if (mode == "upperdiag") return MaskMode::kUpperDiag;
  if (mode == "lowerdiag") return MaskMode::kLowerDiag;
  C2_THROW("unknown mode '", mode, "' (sequence, window, upper, lower, upperdiag or lowerdiag)");
}

bool NeedsSecondInput(MaskMode m) { return m == MaskMode::kSequence || m == MaskMode::kWindow; }

class SequenceMaskOp final : public Operator<CPUContext> {
 public:
  SequenceMaskOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        mode_(ReadMode(GetSingleArgument<std::string>("mode", "sequence"))),
        axis_(GetSingleArgument<int>("axis", 1)),
        batch_(GetSingleArgument<int>("batch", -1)),
        repeat_from_(GetSingleArgument<int>("repeat_from_axis", -1)),
        radius_(GetSingleArgument<int>("radius", 10)),
        fill_(GetSingleArgument<bool>("grad", false)
                  ? 0.f
                  : GetSingleArgument<float>("fill_val", -std::numeric_limits<float>::infinity())) {
    C2_ENFORCE(InputSize() == (NeedsSecondInput(mode_) ? 2 : 1), "mode ",
               GetSingleArgument<std::string>("mode", "sequence"), " takes ",
               NeedsSecondInput(mode_) ? 2 : 1, " input(s), got ", InputSize());
    C2_ENFORCE(repeat_from_ < 0 || (mode_ == MaskMode::kSequence && batch_ < 0),
               "repeat_from_axis works in sequence mode without batch only");
  }

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    C2_ENFORCE(X.IsType<float>(), "input must be float, got ", X.DebugString());
    const int nd = X.ndim();
    const int axis = CanonicalAxis(axis_, std::max(nd, 1), "axis");
    const int rep = repeat_from_ < 0 ? nd : CanonicalAxis(repeat_from_, nd, "repeat_from_axis");
    C2_ENFORCE(rep >= axis, "repeat_from_axis ", repeat_from_, " must not come before axis ",
               axis_);
    C2_ENFORCE(batch_ < axis, "batch ", batch_, " must come before axis ", axis_);
    const int64_t rows = Prod(X.dims(), 0, axis);
    const int64_t cols = Prod(X.dims(), axis, rep);
    const int64_t repeat = Prod(X.dims(), rep, nd);
    const int64_t per_entry = batch_ < 0 ? 1 : Prod(X.dims(), batch_, axis);  // rows per entry
    const int64_t entries = rows / std::max<int64_t>(per_entry, 1);
    std::vector<int64_t> values;
    if (NeedsSecondInput(mode_)) {
      const Tensor& L = Input(1);
      C2_ENFORCE(L.IsType<int32_t>() && L.numel() == (batch_ < 0 ? rows : entries),
                 mode_ == MaskMode::kSequence ? "sequence_lengths" : "window centers",
                 " must hold ", batch_ < 0 ? rows : entries, " int32 values, got ",
                 L.DebugString());
      values.assign(L.data<int32_t>(), L.data<int32_t>() + L.numel());
    }
    Tensor* Y = Output(0);
    if (Y != &X) Y->ResizeLike(X);
    const float* x = X.data<float>();
    float* y = Y->mutable_data<float>();
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t k = batch_ < 0 ? i : i / per_entry;  // lengths / centers index
      const int64_t r = batch_ < 0 ? i : i % per_entry;  // the row within its batch entry
      for (int64_t j = 0; j < cols; ++j) {
        const bool masked = Masked(r, j, values.empty() ? 0 : values[k]);
        const int64_t base = (i * cols + j) * repeat;
        for (int64_t e = base; e < base + repeat; ++e) y[e] = masked ? fill_ : x[e];
      }
    }
    return true;
  }

 private:
  bool Masked(int64_t i, int64_t j, int64_t value) const {
    switch (mode_) {
      case MaskMode::kSequence:
        return j >= value;
      case MaskMode::kWindow:
        return j < value - radius_ || j > value + radius_;
      case MaskMode::kUpper:
        return j < i;
      case MaskMode::kLower:
        return j > i;
      case MaskMode::kUpperDiag:
        return j <= i;
      case MaskMode::kLowerDiag:
        return j >= i;
    }
    return false;
  }

  MaskMode mode_;
  int axis_, batch_, repeat_from_, radius_;
  float fill_;
};

class GetSequenceMaskGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    std::vector<std::string> inputs{GO(0)};
    if (Def().input_size() > 1) inputs.push_back(I(1));
    return SingleGradientDef("SequenceMask", "", inputs, {GI(0)}, {MakeArgument<int>("grad", 1)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(SequenceMask, SequenceMaskOp);
REGISTER_GPU_FALLBACK(SequenceMask);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(SequenceMask)
    .NumInputs(1, 2)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShapeOfInput(0)
    .Arg("mode", "sequence (default), window, upper, lower, upperdiag or lowerdiag")
    .Arg("axis", "the first dim of the columns (default 1)")
    .Arg("batch", "the first dim of a batch entry's rows (optional)")
    .Arg("repeat_from_axis", "sequence mode: the mask repeats over the dims from here on")
    .Arg("radius", "window mode: the half-width of the window (default 10)")
    .Arg("fill_val", "the value of masked elements (default -inf)")
    .Arg("grad", "1: fill with 0 (the gradient)")
    .Input(0, "input", "float tensor")
    .Input(1, "sequence_lengths", "int32 lengths (sequence) or window centers (window)")
    .Output(0, "masked_tensor", "input with the masked elements set to fill_val")
    .SetDoc("Masks a tensor viewed as a matrix, for attention over sequences.");
REGISTER_GRADIENT(SequenceMask, GetSequenceMaskGradient);

}  // namespace caffe2
