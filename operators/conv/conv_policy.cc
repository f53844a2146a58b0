#include "operators/conv/conv_policy.h"

namespace caffe2 {

const char* ConvVariantName(ConvVariant v) {
  switch (v) {
    case ConvVariant::kGemm:
      return "gemm";
    case ConvVariant::kDirect:
      return "direct";
    case ConvVariant::kBlocked:
      return "blocked";
    case ConvVariant::kWinograd:
      return "winograd";
  }
  return "?";
}

std::optional<ConvVariant> ParseConvVariant(const std::string& name) {
  for (ConvVariant v :
       {ConvVariant::kGemm, ConvVariant::kDirect, ConvVariant::kBlocked, ConvVariant::kWinograd}) {
    if (name == ConvVariantName(v)) return v;
  }
  return std::nullopt;
}

bool ConvOffer::Has(ConvVariant v) const {
  switch (v) {
    case ConvVariant::kGemm:
      return true;
    case ConvVariant::kDirect:
      return direct;
    case ConvVariant::kBlocked:
      return blocked;
    case ConvVariant::kWinograd:
      return winograd;
  }
  return false;
}

namespace {

// The measurements behind the rule (docs/determinism.md; benchmarks/tune_conv_policy.py reruns
// them):
// - oneDNN's direct and Winograd kernels work on blocks of 16 channels; with channel counts that do
//   not fill them (LeNet's 1 and 20, the RGB stem), im2col + GEMM is as fast or faster, except in
//   the backward pass of a wide window onto full blocks of outputs (the 7x7 RGB stem of ResNet-50
//   with its 64 outputs), where oneDNN's plain-layout kernel wins by ~30%.
// - 3x3 stride-1 convolutions: Winograd wins both passes at 16 to 512 channels.
// - 1x1 convolutions: GEMM wins the forward pass; backward, GEMM wins for narrow layers
// (ResNet-20's
//   16 -> 32) and oneDNN's plain-layout kernel for wide ones (ResNet-50's, 64 channels and up) by
//   ~2x.
// - Other windows (3x3 stride 2): the blocked layout wins for narrow layers (ResNet-20), while from
//   128 channels on the reorders into it cost more than they save: GEMM forward, plain layouts
//   backward.
constexpr int64_t kBlock = 16;
constexpr int64_t kWidePointwise = 64;
constexpr int64_t kWide = 128;
constexpr int64_t kWideWindow = 128;  // channels x window elements per group

bool Aligned(const ConvShape& s) { return s.Cg % kBlock == 0 && s.Mg % kBlock == 0; }

bool Is1x1(const ConvShape& s) { return s.K == 1; }

bool Is3x3Stride1(const ConvShape& s) {
  if (s.g.spatial_dims() != 2) return false;
  for (int i = 0; i < 2; ++i) {
    if (s.g.kernel[i] != 3 || s.g.stride[i] != 1 || s.g.dilation[i] != 1) return false;
  }
  return true;
}

// The first of `order` on offer (gemm always is).
ConvVariant FirstOffered(const ConvOffer& offer, std::initializer_list<ConvVariant> order) {
  for (ConvVariant v : order) {
    if (offer.Has(v)) return v;
  }
  return ConvVariant::kGemm;
}

// The weights and data passes of the backward rule, each falling back along the same order; gemm
// for both unless both have a oneDNN variant.
ConvBackwardChoice Both(const ConvOffer& weights, const ConvOffer& data, bool dx,
                        std::initializer_list<ConvVariant> order) {
  ConvBackwardChoice c;
  c.weights = FirstOffered(weights, order);
  c.data = dx ? FirstOffered(data, order) : ConvVariant::kGemm;
  if (c.weights == ConvVariant::kGemm || (dx && c.data == ConvVariant::kGemm))
    return ConvBackwardChoice();
  if (!dx) c.data = ConvVariant::kGemm;
  return c;
}

}  // namespace

ConvVariant ConvForwardRule(const ConvShape& s, const ConvOffer& offer) {
  if (Is1x1(s) || !Aligned(s)) return ConvVariant::kGemm;
  if (Is3x3Stride1(s)) return FirstOffered(offer, {ConvVariant::kWinograd, ConvVariant::kBlocked});
  if (s.Cg >= kWide) return ConvVariant::kGemm;
  return FirstOffered(offer, {ConvVariant::kBlocked, ConvVariant::kDirect});
}

ConvBackwardChoice ConvBackwardRule(const ConvShape& s, const ConvOffer& weights,
                                    const ConvOffer& data, bool dx) {
  using V = ConvVariant;
  if (!Aligned(s)) {
    // The RGB stem: few input channels, but a wide window and full blocks of output channels.
    if (s.Mg % kBlock == 0 && s.CgK() >= kWideWindow && !Is1x1(s))
      return Both(weights, data, dx, {V::kDirect});
    return ConvBackwardChoice();
  }
  if (Is3x3Stride1(s)) return Both(weights, data, dx, {V::kWinograd, V::kBlocked, V::kDirect});
  if (Is1x1(s)) {
    if (s.Cg >= kWidePointwise && s.Mg >= kWidePointwise)
      return Both(weights, data, dx, {V::kDirect});
    return ConvBackwardChoice();
  }
  if (s.Cg >= kWide) return Both(weights, data, dx, {V::kDirect, V::kBlocked});
  return Both(weights, data, dx, {V::kBlocked, V::kDirect});
}

std::string ConvBackwardChoiceName(const ConvBackwardChoice& c, bool dx) {
  if (c.weights == ConvVariant::kGemm) return "gemm";
  return std::string(ConvVariantName(c.weights)) + "+" + (dx ? ConvVariantName(c.data) : "none");
}

std::optional<ConvBackwardChoice> ParseConvBackwardChoice(const std::string& name, bool dx) {
  if (name == "gemm") return ConvBackwardChoice();
  const auto plus = name.find('+');
  if (plus == std::string::npos) return std::nullopt;
  const auto weights = ParseConvVariant(name.substr(0, plus));
  const std::string data_name = name.substr(plus + 1);
  if (!weights || *weights == ConvVariant::kGemm) return std::nullopt;
  ConvBackwardChoice c;
  c.weights = *weights;
  if (!dx) {
    if (data_name != "none") return std::nullopt;
    return c;
  }
  const auto data = ParseConvVariant(data_name);
  if (!data || *data == ConvVariant::kGemm) return std::nullopt;
  c.data = *data;
  return c;
}

}  // namespace caffe2
