// Do: [outer inputs..., workspace_stack] -> [outer outputs..., workspace_stack] (the same stack
// blob last on both sides); runs the NetDef argument `net` in a child workspace of the op's
// workspace (workspace_stack.h) that sees only the outer blobs bound to it: `inner_blobs` (strings,
// names in the subnet) and `outer_blobs_idx` (ints, positions in the outer inputs followed by the
// outer outputs, neither counting the stack) pair up one to one, and every outer blob must be
// bound. Other blobs the subnet makes stay in the child. `reuse_workspace` (default 0) reruns in
// the top child of the stack instead of pushing a new one. Upstream's `copy_external_blobs` and the
// gradient form of Do (is_gradient_op) are not supported here and are refused by name.
#include <set>

#include "core/gradient.h"
#include "core/net.h"
#include "core/workspace.h"
#include "operators/control/workspace_stack.h"

namespace caffe2 {
namespace {

// The outer blob names: the inputs then the outputs, without the stack blob that ends both.
std::vector<std::string> OuterNames(const OperatorDef& def) {
  C2_ENFORCE(def.input_size() >= 1 && def.output_size() >= 1,
             "Do needs the workspace stack blob as its last input and last output");
  C2_ENFORCE(def.input(def.input_size() - 1) == def.output(def.output_size() - 1),
             "the last input '", def.input(def.input_size() - 1), "' and the last output '",
             def.output(def.output_size() - 1), "' must be the same workspace stack blob");
  std::vector<std::string> names(def.input().begin(), def.input().end() - 1);
  names.insert(names.end(), def.output().begin(), def.output().end() - 1);
  return names;
}

WorkspaceStack::Bindings ReadBindings(const OperatorBase& op) {
  const auto inner = op.GetRepeatedArgument<std::string>("inner_blobs", {});
  const auto outer_idx = op.GetRepeatedArgument<int>("outer_blobs_idx", {});
  C2_ENFORCE(inner.size() == outer_idx.size(), "inner_blobs has ", inner.size(),
             " names but outer_blobs_idx has ", outer_idx.size(), " indices");
  const std::vector<std::string> outer = OuterNames(op.debug_def());
  WorkspaceStack::Bindings bindings;
  std::set<std::string> bound_outer;
  for (size_t i = 0; i < inner.size(); ++i) {
    C2_ENFORCE(outer_idx[i] >= 0 && outer_idx[i] < static_cast<int>(outer.size()),
               "outer_blobs_idx[", i, "] = ", outer_idx[i], " is out of range for ", outer.size(),
               " outer blobs");
    C2_ENFORCE(bindings.count(inner[i]) == 0, "the inner blob '", inner[i], "' is bound twice");
    bindings[inner[i]] = outer[outer_idx[i]];
    bound_outer.insert(outer[outer_idx[i]]);
  }
  for (const std::string& name : outer) {
    C2_ENFORCE(bound_outer.count(name), "the outer blob '", name, "' is bound to no inner blob");
  }
  C2_ENFORCE(bound_outer.size() == inner.size(),
             "an outer blob is bound to more than one inner blob");
  return bindings;
}

class DoOp final : public Operator<CPUContext> {
 public:
  DoOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        net_def_(ReadNet(*this)),
        bindings_(ReadBindings(*this)),
        reuse_workspace_(GetSingleArgument<bool>("reuse_workspace", false)) {
    C2_ENFORCE(!def.is_gradient_op(), "the gradient form of Do is not supported");
    C2_ENFORCE(!GetSingleArgument<bool>("copy_external_blobs", false),
               "copy_external_blobs is not supported: the child workspace writes the bound outer "
               "blobs themselves");
  }

  bool RunOnDevice() override {
    Blob* stack_blob = OutputBlob(OutputSize() - 1);
    C2_ENFORCE(stack_blob->IsType<WorkspaceStack>(), "the blob '",
               debug_def().output(OutputSize() - 1),
               "' holds no workspace stack (make it with CreateScope)");
    auto* stack = stack_blob->GetMutable<WorkspaceStack>();
    std::shared_ptr<Workspace> child =
        reuse_workspace_ && !stack->Empty()
            ? stack->ReuseLastForwardWorkspace(workspace(), bindings_)
            : stack->PushForwardWorkspace(workspace(), bindings_);
    NetBase* net = child->GetNet(net_def_.name());
    if (net == nullptr) net = child->CreateNet(net_def_, true);
    return net->Run();
  }

 private:
  static NetDef ReadNet(const OperatorBase& op) {
    C2_ENFORCE(op.HasSingleArgumentOfType<NetDef>("net"),
               "the argument net (a NetDef) is required");
    NetDef def = op.GetSingleArgument<NetDef>("net", NetDef());
    if (def.name().empty()) def.set_name("do_net");
    return def;
  }

  NetDef net_def_;
  WorkspaceStack::Bindings bindings_;
  bool reuse_workspace_;
};

}  // namespace

REGISTER_CPU_OPERATOR(Do, DoOp);
REGISTER_CUDA_OPERATOR(Do, DoOp);
OPERATOR_SCHEMA(Do)
    .NumInputs(1, OpSchema::kInf)
    .NumOutputs(1, OpSchema::kInf)
    .AllowInplace([](int, int) { return true; })  // the stack, and blobs read and written
    .Arg("net", "the NetDef to run in a child workspace", true)
    .Arg("inner_blobs", "names in the subnet bound to outer blobs")
    .Arg("outer_blobs_idx", "for each inner blob, its outer blob: an index into inputs + outputs")
    .Arg("reuse_workspace", "1: rerun in the top child workspace of the stack (default 0)")
    .Arg("copy_external_blobs",
         "(bool, default 0) upstream's copying of outer blobs into the child; only 0 is "
         "supported, since the child writes the bound outer blobs themselves")
    .SetDoc("Runs a subnet in a child workspace bound to the op's blobs.");
REGISTER_GRADIENT(Do, NoGradient);

}  // namespace caffe2
