// LSTMUnit: [hidden_t_prev (1, N, D), cell_t_prev (1, N, D), gates (1, N, 4D), seq_lengths (N)
// int32, timestep (1) int32] -> [hidden_t, cell_t] (1, N, D): one LSTM step from the gate
// pre-activations in the order i, f, o, g:
//   c = sigmoid(f + forget_bias) c_prev + sigmoid(i) tanh(g),  h = sigmoid(o) tanh(c);
// rows whose sequence has ended keep h_prev and c_prev (zeros with drop_states). Arguments and the
// optional seq_lengths input: rnn_unit_checks.h.
// LSTMUnitGradient: [hidden_t_prev, cell_t_prev, gates, seq_lengths, timestep, hidden_t, cell_t,
// hidden_t_grad, cell_t_grad] -> [hidden_t_prev_grad, cell_t_prev_grad, gates_grad].
#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "operators/rnn/rnn_unit_checks.h"

namespace caffe2 {
namespace {

struct LstmDims {
  int64_t N, D;
};

LstmDims CheckLstmInputs(const OperatorBase& op) {
  LstmDims d;
  RnnGateDims(op.Input(2), 4, &d.N, &d.D);
  CheckRnnState(op.Input(0), "hidden_t_prev", d.N, d.D);
  CheckRnnState(op.Input(1), "cell_t_prev", d.N, d.D);
  return d;
}

class LSTMUnitOp final : public Operator<CPUContext> {
 public:
  LSTMUnitOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), args_(ReadRnnUnitArgs(*this)) {}
  bool RunOnDevice() override {
    const LstmDims s = CheckLstmInputs(*this);
    const std::vector<bool> valid = RnnValidRows(*this, args_, 3, s.N);
    const float* h_prev = Input(0).data<float>();
    const float* c_prev = Input(1).data<float>();
    const float* gates = Input(2).data<float>();
    Tensor* H = Output(0);
    Tensor* C = Output(1);
    H->Resize(1, s.N, s.D);
    C->Resize(1, s.N, s.D);
    float* h = H->mutable_data<float>();
    float* c = C->mutable_data<float>();
    for (int64_t n = 0; n < s.N; ++n) {
      const float* x = gates + n * 4 * s.D;
      for (int64_t d = 0; d < s.D; ++d) {
        const int64_t k = n * s.D + d;
        if (!valid[n]) {
          h[k] = args_.drop_states ? 0.f : h_prev[k];
          c[k] = args_.drop_states ? 0.f : c_prev[k];
          continue;
        }
        const float i = RnnSigmoid(x[d]);
        const float f = RnnSigmoid(x[s.D + d] + args_.forget_bias);
        const float o = RnnSigmoid(x[2 * s.D + d]);
        const float g = std::tanh(x[3 * s.D + d]);
        c[k] = f * c_prev[k] + i * g;
        h[k] = o * std::tanh(c[k]);
      }
    }
    return true;
  }

 private:
  RnnUnitArgs args_;
};

class LSTMUnitGradientOp final : public Operator<CPUContext> {
 public:
  LSTMUnitGradientOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), args_(ReadRnnUnitArgs(*this)) {}
  bool RunOnDevice() override {
    const LstmDims s = CheckLstmInputs(*this);
    const std::vector<bool> valid = RnnValidRows(*this, args_, 3, s.N);
    const int after = args_.sequence_lengths ? 5 : 4;  // hidden_t, cell_t, their grads follow
    const Tensor& C = Input(after + 1);
    const Tensor& dH = Input(after + 2);
    const Tensor& dC = Input(after + 3);
    CheckRnnState(C, "cell_t", s.N, s.D);
    CheckRnnState(dH, "hidden_t_grad", s.N, s.D);
    CheckRnnState(dC, "cell_t_grad", s.N, s.D);
    const float* c_prev = Input(1).data<float>();
    const float* gates = Input(2).data<float>();
    const float* c = C.data<float>();
    const float* dh = dH.data<float>();
    const float* dc = dC.data<float>();
    Tensor* dH_prev = Output(0);
    Tensor* dC_prev = Output(1);
    Tensor* dGates = Output(2);
    dH_prev->Resize(1, s.N, s.D);
    dC_prev->Resize(1, s.N, s.D);
    dGates->Resize(1, s.N, 4 * s.D);
    float* dh_prev = dH_prev->mutable_data<float>();
    float* dc_prev = dC_prev->mutable_data<float>();
    float* dx_all = dGates->mutable_data<float>();
    for (int64_t n = 0; n < s.N; ++n) {
      const float* x = gates + n * 4 * s.D;
      float* dx = dx_all + n * 4 * s.D;
      for (int64_t d = 0; d < s.D; ++d) {
        const int64_t k = n * s.D + d;
        if (!valid[n]) {
          dh_prev[k] = args_.drop_states ? 0.f : dh[k];
          dc_prev[k] = args_.drop_states ? 0.f : dc[k];
          dx[d] = dx[s.D + d] = dx[2 * s.D + d] = dx[3 * s.D + d] = 0.f;
          continue;
        }
        const float i = RnnSigmoid(x[d]);
        const float f = RnnSigmoid(x[s.D + d] + args_.forget_bias);
        const float o = RnnSigmoid(x[2 * s.D + d]);
        const float g = std::tanh(x[3 * s.D + d]);
        const float tanh_c = std::tanh(c[k]);
        const float dc_total = dc[k] + dh[k] * o * (1.f - tanh_c * tanh_c);
        dh_prev[k] = 0.f;  // h_prev enters the step through the gates, outside this op
        dc_prev[k] = dc_total * f;
        dx[d] = dc_total * g * i * (1.f - i);
        dx[s.D + d] = dc_total * c_prev[k] * f * (1.f - f);
        dx[2 * s.D + d] = dh[k] * tanh_c * o * (1.f - o);
        dx[3 * s.D + d] = dc_total * i * (1.f - g * g);
      }
    }
    return true;
  }

 private:
  RnnUnitArgs args_;
};

class GetLSTMUnitGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    std::vector<std::string> inputs;
    for (int i = 0; i < Def().input_size(); ++i) inputs.push_back(I(i));
    for (const std::string& name : {O(0), O(1), GO(0), GO(1)}) inputs.push_back(name);
    return SingleGradientDef("LSTMUnitGradient", "", inputs, {GI(0), GI(1), GI(2)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(LSTMUnit, LSTMUnitOp);
REGISTER_GPU_FALLBACK(LSTMUnit);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(LSTMUnit)
    .NumInputs(4, 5)
    .NumOutputs(2)
    .Arg("forget_bias", "added to the forget gate's pre-activation (default 0)")
    .Arg("drop_states", "1: ended rows get zero states instead of their previous ones")
    .Arg("sequence_lengths", "0: no seq_lengths input (default 1)")
    .Input(0, "hidden_t_prev", "(1, N, D) float")
    .Input(1, "cell_t_prev", "(1, N, D) float")
    .Input(2, "gates", "(1, N, 4D) float pre-activations, in the order i, f, o, g")
    .Input(3, "seq_lengths", "(N) int32 (absent with sequence_lengths = 0)")
    .Input(4, "timestep", "(1) int32, the step")
    .Output(0, "hidden_t", "(1, N, D) float")
    .Output(1, "cell_t", "(1, N, D) float")
    .SetDoc("One step of an LSTM from its gate pre-activations.");
REGISTER_GRADIENT(LSTMUnit, GetLSTMUnitGradient);
REGISTER_CPU_OPERATOR(LSTMUnitGradient, LSTMUnitGradientOp);
REGISTER_GPU_FALLBACK(LSTMUnitGradient);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(LSTMUnitGradient)
    .NumInputs(8, 9)
    .NumOutputs(3)
    .SetDoc(
        "The gradient of LSTMUnit: [LSTMUnit's inputs, hidden_t, cell_t, hidden_t_grad, "
        "cell_t_grad] -> [hidden_t_prev_grad, cell_t_prev_grad, gates_grad].")
    .Arg("forget_bias", "(float, default 0) the forward op's forget_bias")
    .Arg("drop_states", "(bool, default 0) the forward op's drop_states")
    .Arg("sequence_lengths", "(bool, default 1) 0: the inputs have no seq_lengths");

}  // namespace caffe2
