// What SigmoidCrossEntropyWithLogits and its weighted form share: the per-element log-likelihood of
// a target t under a logit x, its derivative in x, and the (rows, row length) view of the inputs.
// Each op's loss is minus the row mean of the log-likelihood.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/enforce.h"
#include "core/tensor.h"
#include "operators/common/elementwise_functors.h"

namespace caffe2 {

// log(1 + exp(x)) (exact for large |x|) and the logistic function, as the elementwise ops have
// them.
inline float SoftplusOf(float x) { return functors::Softplus()(x); }
inline float SigmoidOf(float x) { return functors::Sigmoid()(x); }

enum class SigmoidXentKind {
  kJoined,     // t log s(x) + (1 - t) log(1 - s(x)), the ordinary loss
  kLogDTrick,  // (2t - 1) log s(x), the "log D trick" of GAN generators
  kUnjoined,   // t x + (1 - t) log(1 - s(x)), the unjoined logistic-regression loss
};

inline float SigmoidXentLogLikelihood(SigmoidXentKind kind, float x, float t) {
  switch (kind) {
    case SigmoidXentKind::kLogDTrick:
      return (2.f * t - 1.f) * (x - SoftplusOf(x));
    case SigmoidXentKind::kUnjoined:
      return t * x + (t - 1.f) * SoftplusOf(x);
    case SigmoidXentKind::kJoined:
      break;
  }
  return t * x - SoftplusOf(x);
}

// d/dx of SigmoidXentLogLikelihood.
inline float SigmoidXentLogLikelihoodGrad(SigmoidXentKind kind, float x, float t) {
  switch (kind) {
    case SigmoidXentKind::kLogDTrick:
      return (2.f * t - 1.f) * (1.f - SigmoidOf(x));
    case SigmoidXentKind::kUnjoined:
      return t + (t - 1.f) * SigmoidOf(x);
    case SigmoidXentKind::kJoined:
      break;
  }
  return t - SigmoidOf(x);
}

struct SigmoidXentRows {
  int64_t rows = 0;
  int64_t inner = 0;               // the last dimension (1 for a 0-d input)
  std::vector<int64_t> loss_dims;  // the logits' dims without the last
};

// Logits and targets (and weights, when given) must be float tensors of one shape.
inline SigmoidXentRows CheckSigmoidXentInputs(const Tensor& logits, const Tensor& targets,
                                              const Tensor* weights = nullptr) {
  C2_ENFORCE(logits.IsType<float>() && targets.IsType<float>(),
             "logits and targets must be float tensors, got ", logits.DebugString(), " and ",
             targets.DebugString());
  C2_ENFORCE(logits.dims() == targets.dims(), "logits ", Tensor::DimsString(logits.dims()),
             " and targets ", Tensor::DimsString(targets.dims()), " must have the same shape");
  if (weights != nullptr) {
    C2_ENFORCE(weights->IsType<float>() && weights->dims() == logits.dims(),
               "weights must be a float tensor of the logits' shape ",
               Tensor::DimsString(logits.dims()), ", got ", weights->DebugString());
  }
  SigmoidXentRows r;
  r.inner = logits.ndim() == 0 ? 1 : logits.dims().back();
  r.loss_dims = logits.dims();
  if (!r.loss_dims.empty()) r.loss_dims.pop_back();
  r.rows = 1;
  for (int64_t d : r.loss_dims) r.rows *= d;
  return r;
}

// The gradient op's dY must have the loss's shape.
inline void CheckSigmoidXentGradient(const Tensor& dY, const SigmoidXentRows& r) {
  C2_ENFORCE(dY.IsType<float>() && dY.dims() == r.loss_dims, "the loss gradient must be a float ",
             Tensor::DimsString(r.loss_dims), " tensor, got ", dY.DebugString());
}

// xent[i] = -mean over row i of w * log-likelihood (w = nullptr: weights of 1); 0 for empty rows.
inline void SigmoidXentForward(SigmoidXentKind kind, const SigmoidXentRows& r, const float* x,
                               const float* t, const float* w, float* xent) {
  for (int64_t i = 0; i < r.rows; ++i) {
    double sum = 0;
    for (int64_t j = i * r.inner; j < (i + 1) * r.inner; ++j)
      sum += (w ? w[j] : 1.f) * SigmoidXentLogLikelihood(kind, x[j], t[j]);
    xent[i] = r.inner == 0 ? 0.f : static_cast<float>(-sum / r.inner);
  }
}

// dx = -dxent[i] * w * dLL/dx / inner, the gradient of SigmoidXentForward in x.
inline void SigmoidXentBackward(SigmoidXentKind kind, const SigmoidXentRows& r, const float* dxent,
                                const float* x, const float* t, const float* w, float* dx) {
  for (int64_t i = 0; i < r.rows; ++i) {
    const float scale = -dxent[i] / static_cast<float>(r.inner);
    for (int64_t j = i * r.inner; j < (i + 1) * r.inner; ++j)
      dx[j] = scale * (w ? w[j] : 1.f) * SigmoidXentLogLikelihoodGrad(kind, x[j], t[j]);
  }
}

}  // namespace caffe2
