// The functors of the unary ops that take arguments (Clip, LeakyRelu, Elu, Scale), built from an
// OperatorDef. Shared by the CPU ops (*.cc) and their CUDA registrations (*.cu), so both read the
// same defaults.
#pragma once

#include <limits>

#include "core/argument.h"
#include "core/enforce.h"
#include "operators/common/elementwise_functors.h"

namespace caffe2 {

// Clip and ClipGradient: `min` (default lowest float) <= `max` (default largest float).
inline functors::Clip ReadClip(const OperatorDef& def) {
  ArgumentHelper args(def);
  functors::Clip f{args.GetSingleArgument<float>("min", std::numeric_limits<float>::lowest()),
                   args.GetSingleArgument<float>("max", std::numeric_limits<float>::max())};
  C2_ENFORCE(f.lo <= f.hi, "min ", f.lo, " is greater than max ", f.hi);
  return f;
}

// LeakyRelu(Gradient) `alpha` (0.01), Elu(Gradient) `alpha` (1.0), Scale `scale` (1.0).
inline float ReadLeakyReluAlpha(const OperatorDef& def) {
  return ArgumentHelper(def).GetSingleArgument<float>("alpha", 0.01f);
}
inline float ReadEluAlpha(const OperatorDef& def) {
  return ArgumentHelper(def).GetSingleArgument<float>("alpha", 1.0f);
}
inline float ReadScale(const OperatorDef& def) {
  return ArgumentHelper(def).GetSingleArgument<float>("scale", 1.0f);
}

}  // namespace caffe2
