// RecurrentNetworkGradient: [grads of the forward outputs in outputs_with_grads..., the forward
// inputs..., the forward outputs (step_workspaces last)] -> [GI(sequence), GI(each param), GI(each
// initial state)]; made by RecurrentNetwork's gradient maker with the forward op's arguments.
// Runs backward_step_net once per timestep, from the last to the first, each in the workspace the
// forward step ran in (so it reads that step's intermediates), with:
//   - the forward links applied again, and the backward links (backward_link_*) making the step's
//     gradient blobs views of the state gradients <state>_grad (zeros, the shape of the state) and
//     of GI(sequence) (zeros like the sequence);
//   - before step t, the gradient of an output aliasing a state from offset k (>= 0) at step t
//     added into <state>_grad[t + k] (after step t + 1 wrote its recurrent gradient there, as
//     upstream's rnn_internal_accumulate_gradient_input); the gradient of an output of a state's
//     last steps is added into those steps before the first backward step;
//   - each param's gradient, which the backward step net names param_grads[i], computed in a blob
//     of the step's own and added into GI(param i) after the step.
// The initial states' gradients are the first L steps of <state>_grad (summed over the batch for
// a (D) initial state). CPU only.
#include <algorithm>

#include "core/gradient.h"
#include "core/net.h"
#include "operators/rnn/recurrent_network_op.h"

namespace caffe2 {
namespace {

constexpr const char* kStepGradientSuffix = "_rnn_step";

void AddFloats(const Tensor& src, int64_t src_begin, Tensor* dst, int64_t dst_begin, int64_t n) {
  C2_ENFORCE(src.IsType<float>() && dst->IsType<float>(),
             "RecurrentNetworkGradient adds float gradients, got ", src.meta().name, " and ",
             dst->meta().name);
  const float* s = src.data<float>() + src_begin;
  float* d = dst->mutable_data<float>() + dst_begin;
  for (int64_t i = 0; i < n; ++i) d[i] += s[i];
}

void ZeroLike(const Tensor& like, Tensor* t) {
  t->Resize(like.dims());
  float* p = t->mutable_data<float>();
  std::fill(p, p + t->numel(), 0.f);
}

class RecurrentNetworkGradientOp final : public Operator<CPUContext> {
 public:
  RecurrentNetworkGradientOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        links_(ReadRnnLinks(*this, "link")),
        backward_links_(ReadRnnLinks(*this, "backward_link")),
        aliases_(ReadRnnAliases(*this)),
        states_(GetRepeatedArgument<std::string>("recurrent_states", {})),
        initial_ids_(GetRepeatedArgument<int>("initial_recurrent_state_ids", {})),
        params_(GetRepeatedArgument<int>("param", {})),
        param_grads_(GetRepeatedArgument<std::string>("param_grads", {})),
        with_grads_(GetRepeatedArgument<int>("outputs_with_grads", {0})),
        timestep_(GetSingleArgument<std::string>("timestep", "timestep")) {
    C2_ENFORCE(param_grads_.size() == params_.size(), "param has ", params_.size(),
               " indices but param_grads has ", param_grads_.size(), " names");
    const int forward_outputs = static_cast<int>(aliases_.size()) + 1;
    forward_inputs_ = InputSize() - static_cast<int>(with_grads_.size()) - forward_outputs;
    C2_ENFORCE(forward_inputs_ >= 1, "RecurrentNetworkGradient has ", InputSize(),
               " inputs, too few for ", with_grads_.size(), " output gradients and ",
               forward_outputs, " forward outputs");
    C2_ENFORCE(OutputSize() == 1 + static_cast<int>(params_.size() + initial_ids_.size()),
               "RecurrentNetworkGradient needs one output per param and per initial state after "
               "the sequence's gradient");
    backward_net_ = StepNetWithLocalParamGradients();
  }

  bool RunOnDevice() override {
    const Tensor& sequence = Input(ForwardInput(0));
    const int64_t T = sequence.dim(0);
    const auto& steps = InputObject<RnnStepWorkspaces>(InputSize() - 1).steps;
    C2_ENFORCE(static_cast<int64_t>(steps.size()) >= T, "the forward RecurrentNetwork kept ",
               steps.size(), " step workspace(s) for ", T,
               " steps: run it with a backward pass (backward_step_net) before its gradient");
    ZeroLike(sequence, Output(0));
    std::vector<Tensor*> state_grads;
    for (const std::string& state : states_) {
      const Blob* blob = workspace()->GetBlob(state);
      C2_ENFORCE(blob != nullptr && blob->IsTensor(), "the recurrent state '", state,
                 "' does not exist: run the forward RecurrentNetwork first");
      state_grads.push_back(workspace()->CreateBlob(state + "_grad")->GetMutable<Tensor>());
      ZeroLike(blob->Get<Tensor>(), state_grads.back());
    }
    std::vector<Tensor*> param_grads;
    for (size_t i = 0; i < params_.size(); ++i) {
      param_grads.push_back(Output(1 + static_cast<int>(i)));
      ZeroLike(Input(ForwardInput(params_[i])), param_grads.back());
    }
    AddLastStepGradients(state_grads);
    for (int64_t t = T - 1; t >= 0; --t) {
      Workspace* step = steps[t].get();
      SetRnnTimestep(timestep_, t, step);
      for (const RnnLink& link : links_) ApplyRnnLink(link, t, workspace(), step);
      for (const RnnLink& link : backward_links_) ApplyRnnLink(link, t, workspace(), step);
      AddStepGradients(t, state_grads);
      if (backward_net_.op_size() == 0) continue;
      for (const std::string& name : local_param_grads_) ZeroLocal(name, step);
      if (!RnnStepNet(backward_net_, "rnn_backward_step", step)->Run()) return false;
      for (size_t i = 0; i < params_.size(); ++i) {
        const Blob* local = step->GetBlob(local_param_grads_[i]);
        if (local != nullptr && local->IsTensor() && local->Get<Tensor>().initialized()) {
          AddFloats(local->Get<Tensor>(), 0, param_grads[i], 0, param_grads[i]->numel());
        }
      }
    }
    WriteInitialStateGradients(state_grads);
    return true;
  }

 private:
  int ForwardInput(int i) const { return static_cast<int>(with_grads_.size()) + i; }

  // The backward step net with each param's gradient renamed to a blob of the step's own.
  NetDef StepNetWithLocalParamGradients() {
    NetDef net = GetSingleArgument<NetDef>("backward_step_net", NetDef());
    for (const std::string& name : param_grads_) {
      local_param_grads_.push_back(name + kStepGradientSuffix);
      for (OperatorDef& op : *net.mutable_op()) {
        for (std::string& in : *op.mutable_input())
          if (in == name) in = local_param_grads_.back();
        for (std::string& out : *op.mutable_output())
          if (out == name) out = local_param_grads_.back();
      }
    }
    return net;
  }

  static void ZeroLocal(const std::string& name, Workspace* step) {
    Blob* blob = step->GetBlob(name);
    if (blob == nullptr || !blob->IsTensor()) return;
    Tensor* t = blob->GetMutable<Tensor>();
    if (t->initialized() && t->IsType<float>()) ZeroLike(*t, t);
  }

  // (state index, gradient input) of each output gradient whose alias has the given sign.
  template <class F>
  void ForEachAliasGradient(bool last_steps, F f) {
    for (size_t k = 0; k < with_grads_.size(); ++k) {
      const int j = with_grads_[k];
      C2_ENFORCE(j >= 0 && j < static_cast<int>(aliases_.size()), "outputs_with_grads entry ", j,
                 " is not an aliased output");
      const RnnAlias& alias = aliases_[j];
      if ((alias.offset < 0) != last_steps) continue;
      const auto it = std::find(states_.begin(), states_.end(), alias.src);
      C2_ENFORCE(it != states_.end(), "alias_src '", alias.src, "' is not a recurrent state");
      f(static_cast<size_t>(it - states_.begin()), Input(static_cast<int>(k)), alias.offset);
    }
  }

  void AddLastStepGradients(const std::vector<Tensor*>& grads) {
    ForEachAliasGradient(true, [&](size_t s, const Tensor& g, int offset) {
      const int64_t begin = grads[s]->dim(0) + offset;
      C2_ENFORCE(g.numel() == grads[s]->numel() / grads[s]->dim(0) * -offset,
                 "the gradient of the last ", -offset, " steps of '", states_[s], "' has shape ",
                 Tensor::DimsString(g.dims()));
      AddFloats(g, 0, grads[s], begin * (grads[s]->numel() / grads[s]->dim(0)), g.numel());
    });
  }

  void AddStepGradients(int64_t t, const std::vector<Tensor*>& grads) {
    ForEachAliasGradient(false, [&](size_t s, const Tensor& g, int offset) {
      const int64_t row = grads[s]->numel() / grads[s]->dim(0);
      C2_ENFORCE(g.ndim() >= 1 && g.dim(0) > t && g.numel() / g.dim(0) == row,
                 "the gradient of the steps of '", states_[s], "' has shape ",
                 Tensor::DimsString(g.dims()));
      AddFloats(g, t * row, grads[s], (t + offset) * row, row);
    });
  }

  void WriteInitialStateGradients(const std::vector<Tensor*>& grads) {
    for (size_t i = 0; i < initial_ids_.size(); ++i) {
      const Tensor& init = Input(ForwardInput(initial_ids_[i]));
      Tensor* out = Output(1 + static_cast<int>(params_.size() + i));
      ZeroLike(init, out);
      const float* g = grads[i]->data<float>();
      float* o = out->mutable_data<float>();
      const int64_t n = out->numel();
      const int64_t copies = init.ndim() == 1 ? grads[i]->dim(1) : 1;  // a (D) state: sum rows
      for (int64_t k = 0; k < copies; ++k)
        for (int64_t j = 0; j < n; ++j) o[j] += g[k * n + j];
    }
  }

  std::vector<RnnLink> links_, backward_links_;
  std::vector<RnnAlias> aliases_;
  std::vector<std::string> states_;
  std::vector<int> initial_ids_, params_;
  std::vector<std::string> param_grads_, local_param_grads_;
  std::vector<int> with_grads_;
  std::string timestep_;
  int forward_inputs_ = 0;
  NetDef backward_net_;
};

}  // namespace

REGISTER_CPU_OPERATOR(RecurrentNetworkGradient, RecurrentNetworkGradientOp);
OPERATOR_SCHEMA(RecurrentNetworkGradient)
    .NumInputs(2, OpSchema::kInf)
    .NumOutputs(1, OpSchema::kInf)
    .SetDoc("The gradient of RecurrentNetwork (made by its gradient maker).")
    .Arg("backward_step_net",
         "(NetDef) one backward timestep, run from the last step to the first in the forward "
         "step's workspace")
    .Arg("recurrent_states", "(list of string) the forward op's (T + L, N, D) state blobs")
    .Arg("initial_recurrent_state_ids",
         "(list of int) the forward input holding each state's initial value")
    .Arg("link_internal", "(list of string) the forward links' step blobs, applied again")
    .Arg("link_external", "(list of string) the sequence tensor of each forward link")
    .Arg("link_offset", "(list of int) the first step of each forward link's window at step 0")
    .Arg("link_window", "(list of int, default 1 each) each forward link's window length")
    .Arg("backward_link_internal",
         "(list of string) the backward step's gradient blobs that view a gradient tensor")
    .Arg("backward_link_external",
         "(list of string) the gradient tensor of each backward link (<state>_grad or the "
         "sequence's gradient)")
    .Arg("backward_link_offset",
         "(list of int) the first step of each backward link's window at step 0")
    .Arg("backward_link_window", "(list of int, default 1 each) each backward link's window length")
    .Arg("alias_src", "(list of string) the recurrent state each aliased forward output copies")
    .Arg("alias_dst", "(list of string) the forward output of each alias")
    .Arg("alias_offset",
         "(list of int) each alias's first step (>= 0) or count of last steps (< 0)")
    .Arg("timestep", "(string, default \"timestep\") the step's int32 timestep blob")
    .Arg("param", "(list of int) the forward inputs that get gradients, after the sequence's")
    .Arg("param_grads", "(list of string) the backward step net's name of each param's gradient")
    .Arg("outputs_with_grads",
         "(list of int, default [0]) the forward outputs whose gradients lead the inputs");

}  // namespace caffe2
