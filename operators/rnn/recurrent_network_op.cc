// RecurrentNetwork: runs the NetDef argument step_net once per timestep of a sequence, as
// upstream's caffe2.python.recurrent.recurrent_net builds it.
//   inputs:  [sequence (T, N, ...), initial states and the other blobs the step net reads]
//   outputs: [the aliases of the recurrent states (alias_dst)..., step_workspaces]
//   recurrent_states[i] (a blob of the op's workspace) holds state i over time, (T + L, N, D): its
//     first L steps are input initial_recurrent_state_ids[i] ((L, N, D), (N, D) for L = 1, or (D)
//     repeated over the batch), and step t writes step t + L... as the links say.
//   link_internal/_external/_offset/_window: at step t the step blob link_internal is a view of
//     link_external[t + offset, t + offset + window) (recurrent_network_op.h), so the step net
//     reads its inputs and writes its outputs in place in the sequence tensors.
//   alias_src/_dst/_offset: after the last step, output alias_dst is a copy of the state alias_src
//     from `offset` on (offset >= 0) or its last -offset steps.
//   timestep (default "timestep"): the step's own int32 (1) blob holding t.
// Each step runs in a child workspace of the op's (step_workspaces, recurrent_network_op.h): one
// per timestep when the op has a backward pass (backward_step_net or param), so that
// RecurrentNetworkGradient finds each step's intermediates; else one for all steps. The gradient:
// recurrent_network_gradient_op.cc. CPU only.
#include "core/gradient.h"
#include "core/net.h"
#include "operators/rnn/recurrent_network_op.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {
namespace {

class RecurrentNetworkOp final : public Operator<CPUContext> {
 public:
  RecurrentNetworkOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        step_net_(ReadStepNet(*this)),
        links_(ReadRnnLinks(*this, "link")),
        aliases_(ReadRnnAliases(*this)),
        states_(GetRepeatedArgument<std::string>("recurrent_states", {})),
        initial_ids_(GetRepeatedArgument<int>("initial_recurrent_state_ids", {})),
        timestep_(GetSingleArgument<std::string>("timestep", "timestep")),
        has_backward_(HasArgument("backward_step_net") ||
                      !GetRepeatedArgument<int>("param", {}).empty()) {
    C2_ENFORCE(states_.size() == initial_ids_.size(), "recurrent_states has ", states_.size(),
               " names but initial_recurrent_state_ids has ", initial_ids_.size(), " indices");
    for (size_t i = 0; i < initial_ids_.size(); ++i) {
      C2_ENFORCE(initial_ids_[i] >= 0 && initial_ids_[i] < InputSize(),
                 "initial_recurrent_state_ids[", i, "] = ", initial_ids_[i],
                 " is not an input index");
    }
    for (const RnnAlias& a : aliases_) output_of_alias_.push_back(OutputIndex(a.dst));
  }

  bool RunOnDevice() override {
    const Tensor& sequence = Input(0);
    C2_ENFORCE(sequence.ndim() >= 2, "the sequence input must be (T, N, ...), got ",
               sequence.DebugString());
    const int64_t T = sequence.dim(0), N = sequence.dim(1);
    for (size_t i = 0; i < states_.size(); ++i) InitializeState(i, T, N);
    auto* steps = OutputObject<RnnStepWorkspaces>(OutputSize() - 1);
    const size_t needed = has_backward_ ? static_cast<size_t>(T) : 1;
    while (steps->steps.size() < needed) {
      steps->steps.push_back(std::make_shared<Workspace>(workspace()));
    }
    for (int64_t t = 0; t < T; ++t) {
      Workspace* step = steps->steps[has_backward_ ? t : 0].get();
      SetRnnTimestep(timestep_, t, step);
      for (const RnnLink& link : links_) ApplyRnnLink(link, t, workspace(), step);
      if (!RnnStepNet(step_net_, "rnn_step", step)->Run()) return false;
    }
    for (size_t i = 0; i < aliases_.size(); ++i) WriteAlias(aliases_[i], output_of_alias_[i]);
    return true;
  }

 private:
  static NetDef ReadStepNet(const OperatorBase& op) {
    C2_ENFORCE(op.HasSingleArgumentOfType<NetDef>("step_net"),
               "the argument step_net (a NetDef) is required");
    return op.GetSingleArgument<NetDef>("step_net", NetDef());
  }

  int OutputIndex(const std::string& name) const {
    for (int j = 0; j + 1 < OutputSize(); ++j) {
      if (debug_def().output(j) == name) return j;
    }
    C2_THROW("alias_dst '", name, "' is not an output of the op");
  }

  // states_[i] = (T + L, N, D), its first L steps from the initial state.
  void InitializeState(size_t i, int64_t T, int64_t N) {
    const Tensor& init = Input(initial_ids_[i]);
    C2_ENFORCE(init.ndim() >= 1 && init.ndim() <= 3, "the initial state '",
               debug_def().input(initial_ids_[i]), "' must be (D), (N, D) or (L, N, D), got ",
               init.DebugString());
    const int64_t D = init.dim(init.ndim() - 1);
    const int64_t L = init.ndim() == 3 ? init.dim(0) : 1;
    if (init.ndim() >= 2) {
      C2_ENFORCE(init.dim(init.ndim() - 2) == N, "the initial state '",
                 debug_def().input(initial_ids_[i]), "' ", Tensor::DimsString(init.dims()),
                 " must have the batch size ", N, " of the sequence");
    }
    Tensor* state = workspace()->CreateBlob(states_[i])->GetMutable<Tensor>();
    state->Resize(T + L, N, D);
    char* dst = static_cast<char*>(state->raw_mutable_data(init.meta()));
    const size_t bytes = init.nbytes();
    const char* src = static_cast<const char*>(init.raw_data());
    for (int64_t copies = init.ndim() == 1 ? N : 1, k = 0; k < copies; ++k) {
      std::memcpy(dst + k * bytes, src, bytes);
    }
  }

  void WriteAlias(const RnnAlias& alias, int out) {
    const Blob* blob = workspace()->GetBlob(alias.src);
    C2_ENFORCE(blob != nullptr && blob->IsTensor(), "alias_src '", alias.src,
               "' is not a recurrent state");
    const Tensor& state = blob->Get<Tensor>();
    const int64_t steps = state.dim(0);
    const int64_t begin = alias.offset >= 0 ? alias.offset : steps + alias.offset;
    C2_ENFORCE(begin >= 0 && begin <= steps, "alias offset ", alias.offset,
               " is out of range for '", alias.src, "' ", Tensor::DimsString(state.dims()));
    std::vector<int64_t> dims = state.dims();
    dims[0] = steps - begin;
    Tensor* dst = Output(out);
    dst->Resize(dims);
    const size_t row_bytes = state.nbytes() / std::max<int64_t>(steps, 1);
    CopyItems(state.meta(), dst->numel(),
              static_cast<const char*>(state.raw_data()) + begin * row_bytes,
              dst->raw_mutable_data(state.meta()));
  }

  NetDef step_net_;
  std::vector<RnnLink> links_;
  std::vector<RnnAlias> aliases_;
  std::vector<int> output_of_alias_;
  std::vector<std::string> states_;
  std::vector<int> initial_ids_;
  std::string timestep_;
  bool has_backward_;
};

// [grads of outputs_with_grads..., every input, every output] -> [GI(sequence), GI(each param),
// GI(each initial state)], as upstream.
class GetRecurrentNetworkGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    ArgumentHelper args(Def());
    const auto with_grads = args.GetRepeatedArgument<int>("outputs_with_grads", {0});
    C2_ENFORCE(!with_grads.empty(), "RecurrentNetwork: outputs_with_grads is empty");
    std::vector<std::string> inputs, outputs{GI(0)};
    for (int j : with_grads) inputs.push_back(GO(j));
    for (int i = 0; i < Def().input_size(); ++i) inputs.push_back(I(i));
    for (int j = 0; j < Def().output_size(); ++j) inputs.push_back(O(j));
    for (int i : args.GetRepeatedArgument<int>("param", {})) outputs.push_back(GI(i));
    for (int i : args.GetRepeatedArgument<int>("initial_recurrent_state_ids", {})) {
      outputs.push_back(GI(i));
    }
    return SingleGradientDef("RecurrentNetworkGradient", "", inputs, outputs);
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(RecurrentNetwork, RecurrentNetworkOp);
OPERATOR_SCHEMA(RecurrentNetwork)
    .NumInputs(1, OpSchema::kInf)
    .NumOutputs(2, OpSchema::kInf)
    .Arg("step_net", "NetDef of one timestep", true)
    .Arg("recurrent_states", "names of the (T + L, N, D) state blobs")
    .Arg("initial_recurrent_state_ids", "the input holding each state's initial value")
    .Arg("link_internal", "step blobs viewing a window of a sequence tensor")
    .Arg("link_external", "the sequence tensor of each link")
    .Arg("link_offset", "the first step of the window at timestep 0")
    .Arg("link_window", "the window's length (default 1)")
    .Arg("alias_src", "the recurrent state each aliased output copies")
    .Arg("alias_dst", "the output of each alias")
    .Arg("alias_offset", "from which step (>= 0) or how many last steps (< 0)")
    .Arg("timestep", "name of the step's int32 timestep blob (default timestep)")
    .Arg("backward_step_net", "NetDef of one backward timestep (for the gradient)")
    .Arg("param", "indices of the inputs that get gradients")
    .Arg("param_grads", "the backward step net's name of each param's gradient")
    .Arg("outputs_with_grads", "outputs that receive gradients (default 0)")
    .Arg("backward_link_internal", "the backward step's link blobs (read by the gradient)")
    .Arg("backward_link_external", "the gradient sequence of each backward link")
    .Arg("backward_link_offset", "the first step of each backward link's window")
    .Arg("recompute_blobs_on_backward",
         "step blobs the backward pass recomputes instead of keeping (upstream's memory option; "
         "accepted, every step's blobs are kept)")
    .Arg("enable_rnn_executor", "(bool) upstream's RNN executor switch; accepted and ignored")
    .Input(0, "sequence", "(T, N, ...) input sequence")
    .SetDoc("Runs a step net over the timesteps of a sequence (upstream's recurrent_net).");
REGISTER_GRADIENT(RecurrentNetwork, GetRecurrentNetworkGradient);

}  // namespace caffe2
