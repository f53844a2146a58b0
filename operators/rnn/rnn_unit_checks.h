// What LSTMUnit and GRUUnit (and their gradients) share: the (1, N, D) state checks, the optional
// seq_lengths input, the timestep, and the arguments. With sequence_lengths = 1 (the default) the
// inputs end with [seq_lengths (N) int32, timestep (1) int32]; with 0 only timestep ends them. A
// row n whose sequence has ended (timestep >= seq_lengths[n]) keeps its previous state, or gets
// zeros when drop_states = 1.
#pragma once

#include <cmath>
#include <vector>

#include "core/operator.h"
#include "operators/common/elementwise_functors.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {

struct RnnUnitArgs {
  bool sequence_lengths, drop_states;
  float forget_bias;  // LSTMUnit only
};

inline RnnUnitArgs ReadRnnUnitArgs(const OperatorBase& op) {
  return {op.GetSingleArgument<bool>("sequence_lengths", true),
          op.GetSingleArgument<bool>("drop_states", false),
          op.GetSingleArgument<float>("forget_bias", 0.f)};
}

// A (1, N, D) float state.
inline void CheckRnnState(const Tensor& t, const char* name, int64_t N, int64_t D) {
  C2_ENFORCE(t.IsType<float>() && t.dims() == std::vector<int64_t>({1, N, D}), name,
             " must be a float (1, ", N, ", ", D, ") tensor, got ", t.DebugString());
}

// The batch and state size from gates (1, N, k D).
inline void RnnGateDims(const Tensor& gates, int k, int64_t* N, int64_t* D) {
  C2_ENFORCE(
      gates.IsType<float>() && gates.ndim() == 3 && gates.dim(0) == 1 && gates.dim(2) % k == 0,
      "gates must be a float (1, N, ", k, " * D) tensor, got ", gates.DebugString());
  *N = gates.dim(1);
  *D = gates.dim(2) / k;
}

// valid[n]: whether row n's sequence still runs at the timestep. `first` is the position of
// seq_lengths (or of timestep when sequence_lengths = 0) among the op's inputs.
inline std::vector<bool> RnnValidRows(const OperatorBase& op, const RnnUnitArgs& args, int first,
                                      int64_t N) {
  const int64_t t = ScalarInt(op.Input(first + (args.sequence_lengths ? 1 : 0)), "timestep");
  std::vector<bool> valid(N, true);
  if (!args.sequence_lengths) return valid;
  const Tensor& lengths = op.Input(first);
  C2_ENFORCE(lengths.IsType<int32_t>() && lengths.numel() == N, "seq_lengths must hold ", N,
             " int32 values (one per row), got ", lengths.DebugString());
  for (int64_t n = 0; n < N; ++n) valid[n] = t < lengths.data<int32_t>()[n];
  return valid;
}

inline float RnnSigmoid(float x) { return functors::Sigmoid()(x); }

}  // namespace caffe2
