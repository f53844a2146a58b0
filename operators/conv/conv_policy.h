// The fixed rule that picks the variant of each pass of a CPU convolution when nothing was timed
// (conv_op_dnnl.h lists the variants; docs/determinism.md gives the measurements behind the rule).
// Pure functions of the case's shape and of the variants oneDNN offers for it, so every process
// picks the same; `benchmarks/tune_conv_policy.py` times the variants of the benchmark models'
// convolutions and prints where the rule and the fastest variant differ.
#pragma once

#include <optional>
#include <string>

#include "operators/conv/conv_op.h"

namespace caffe2 {

enum class ConvVariant { kGemm, kDirect, kBlocked, kWinograd };

const char* ConvVariantName(ConvVariant v);
std::optional<ConvVariant> ParseConvVariant(const std::string& name);

// The oneDNN variants on offer for one pass (gemm is always possible).
struct ConvOffer {
  bool direct = false, blocked = false, winograd = false;
  bool Has(ConvVariant v) const;
};

// The backward passes' variants: weights and data (data is unused without dX); both kGemm or
// neither.
struct ConvBackwardChoice {
  ConvVariant weights = ConvVariant::kGemm;
  ConvVariant data = ConvVariant::kGemm;
};

ConvVariant ConvForwardRule(const ConvShape& s, const ConvOffer& offer);
ConvBackwardChoice ConvBackwardRule(const ConvShape& s, const ConvOffer& weights,
                                    const ConvOffer& data, bool dx);

// "gemm" or "<weights>+<data>" (data "none" without dX), and back; nullopt for a malformed name.
std::string ConvBackwardChoiceName(const ConvBackwardChoice& c, bool dx);
std::optional<ConvBackwardChoice> ParseConvBackwardChoice(const std::string& name, bool dx);

}  // namespace caffe2
