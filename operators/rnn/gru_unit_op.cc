// GRUUnit: [hidden_t_prev (1, N, D), gates (1, N, 3D), seq_lengths (N) int32, timestep (1) int32]
// -> [hidden_t (1, N, D)]: one GRU step from the gate pre-activations in the order r, u, o, where
// the reset gate r has already been applied to the recurrent part of o (by GRUCell, outside this
// op), so only u and o are read: h = h_prev sigmoid(u) + tanh(o) (1 - sigmoid(u)). Rows whose
// sequence has ended keep h_prev (zeros with drop_states). Arguments: rnn_unit_checks.h.
// GRUUnitGradient: [hidden_t_prev, gates, seq_lengths, timestep, hidden_t, hidden_t_grad] ->
// [hidden_t_prev_grad, gates_grad]; the r part of gates_grad is 0.
#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "operators/rnn/rnn_unit_checks.h"

namespace caffe2 {
namespace {

struct GruDims {
  int64_t N, D;
};

GruDims CheckGruInputs(const OperatorBase& op) {
  GruDims d;
  RnnGateDims(op.Input(1), 3, &d.N, &d.D);
  CheckRnnState(op.Input(0), "hidden_t_prev", d.N, d.D);
  return d;
}

class GRUUnitOp final : public Operator<CPUContext> {
 public:
  GRUUnitOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), args_(ReadRnnUnitArgs(*this)) {}
  bool RunOnDevice() override {
    const GruDims s = CheckGruInputs(*this);
    const std::vector<bool> valid = RnnValidRows(*this, args_, 2, s.N);
    const float* h_prev = Input(0).data<float>();
    const float* gates = Input(1).data<float>();
    Tensor* H = Output(0);
    H->Resize(1, s.N, s.D);
    float* h = H->mutable_data<float>();
    for (int64_t n = 0; n < s.N; ++n) {
      const float* x = gates + n * 3 * s.D;
      for (int64_t d = 0; d < s.D; ++d) {
        const int64_t k = n * s.D + d;
        if (!valid[n]) {
          h[k] = args_.drop_states ? 0.f : h_prev[k];
          continue;
        }
        const float u = RnnSigmoid(x[s.D + d]);
        h[k] = h_prev[k] * u + std::tanh(x[2 * s.D + d]) * (1.f - u);
      }
    }
    return true;
  }

 private:
  RnnUnitArgs args_;
};

class GRUUnitGradientOp final : public Operator<CPUContext> {
 public:
  GRUUnitGradientOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), args_(ReadRnnUnitArgs(*this)) {}
  bool RunOnDevice() override {
    const GruDims s = CheckGruInputs(*this);
    const std::vector<bool> valid = RnnValidRows(*this, args_, 2, s.N);
    const Tensor& dH = Input(args_.sequence_lengths ? 5 : 4);
    CheckRnnState(dH, "hidden_t_grad", s.N, s.D);
    const float* h_prev = Input(0).data<float>();
    const float* gates = Input(1).data<float>();
    const float* dh = dH.data<float>();
    Tensor* dH_prev = Output(0);
    Tensor* dGates = Output(1);
    dH_prev->Resize(1, s.N, s.D);
    dGates->Resize(1, s.N, 3 * s.D);
    float* dh_prev = dH_prev->mutable_data<float>();
    float* dx_all = dGates->mutable_data<float>();
    for (int64_t n = 0; n < s.N; ++n) {
      const float* x = gates + n * 3 * s.D;
      float* dx = dx_all + n * 3 * s.D;
      for (int64_t d = 0; d < s.D; ++d) {
        const int64_t k = n * s.D + d;
        dx[d] = 0.f;  // the reset gate is applied outside this op
        if (!valid[n]) {
          dh_prev[k] = args_.drop_states ? 0.f : dh[k];
          dx[s.D + d] = dx[2 * s.D + d] = 0.f;
          continue;
        }
        const float u = RnnSigmoid(x[s.D + d]);
        const float o = std::tanh(x[2 * s.D + d]);
        dh_prev[k] = dh[k] * u;
        dx[s.D + d] = dh[k] * (h_prev[k] - o) * u * (1.f - u);
        dx[2 * s.D + d] = dh[k] * (1.f - u) * (1.f - o * o);
      }
    }
    return true;
  }

 private:
  RnnUnitArgs args_;
};

class GetGRUUnitGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    std::vector<std::string> inputs;
    for (int i = 0; i < Def().input_size(); ++i) inputs.push_back(I(i));
    inputs.push_back(O(0));
    inputs.push_back(GO(0));
    return SingleGradientDef("GRUUnitGradient", "", inputs, {GI(0), GI(1)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(GRUUnit, GRUUnitOp);
REGISTER_GPU_FALLBACK(GRUUnit);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(GRUUnit)
    .NumInputs(3, 4)
    .NumOutputs(1)
    .Arg("drop_states", "1: ended rows get a zero state instead of their previous one")
    .Arg("sequence_lengths", "0: no seq_lengths input (default 1)")
    .Input(0, "hidden_t_prev", "(1, N, D) float")
    .Input(1, "gates", "(1, N, 3D) float pre-activations, in the order r, u, o")
    .Input(2, "seq_lengths", "(N) int32 (absent with sequence_lengths = 0)")
    .Input(3, "timestep", "(1) int32, the step")
    .Output(0, "hidden_t", "(1, N, D) float")
    .SetDoc("One step of a GRU from its gate pre-activations (the reset gate applied outside).");
REGISTER_GRADIENT(GRUUnit, GetGRUUnitGradient);
REGISTER_CPU_OPERATOR(GRUUnitGradient, GRUUnitGradientOp);
REGISTER_GPU_FALLBACK(GRUUnitGradient);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(GRUUnitGradient)
    .NumInputs(5, 6)
    .NumOutputs(2)
    .SetDoc(
        "The gradient of GRUUnit: [GRUUnit's inputs, hidden_t, hidden_t_grad] -> "
        "[hidden_t_prev_grad, gates_grad].")
    .Arg("drop_states", "(bool, default 0) the forward op's drop_states")
    .Arg("sequence_lengths", "(bool, default 1) 0: the inputs have no seq_lengths");

}  // namespace caffe2
