// CreateScope: [] -> [workspace_stack], an empty WorkspaceStack (workspace_stack.h) for the Do ops
// of one scope; on a blob that holds one already, clears it (its children are kept for reuse).
// HasScope: [workspace_stack] -> [has_scope (1) bool], whether the stack holds a workspace.
// No gradients. One class serves the CPU and CUDA: the stack is a host object.
#include "core/gradient.h"
#include "core/operator.h"
#include "operators/control/workspace_stack.h"

namespace caffe2 {
namespace {

class CreateScopeOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    OutputObject<WorkspaceStack>(0)->Clear();
    return true;
  }
};

class HasScopeOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    C2_ENFORCE(InputBlob(0).IsType<WorkspaceStack>(), "the blob '", debug_def().input(0),
               "' holds no workspace stack (make it with CreateScope)");
    const bool has_scope = !InputObject<WorkspaceStack>(0).Empty();
    Tensor* out = Output(0);
    out->Resize(1);
    out->mutable_data<bool>()[0] = has_scope;
    return true;
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(CreateScope, CreateScopeOp);
REGISTER_CUDA_OPERATOR(CreateScope, CreateScopeOp);
OPERATOR_SCHEMA(CreateScope)
    .NumInputs(0)
    .NumOutputs(1)
    .Output(0, "workspace_stack", "an empty stack of the child workspaces of Do ops")
    .SetDoc("Makes (or clears) the workspace stack of a scope of Do ops.");
REGISTER_GRADIENT(CreateScope, NoGradient);

REGISTER_CPU_OPERATOR(HasScope, HasScopeOp);
REGISTER_CUDA_OPERATOR(HasScope, HasScopeOp);
OPERATOR_SCHEMA(HasScope)
    .NumInputs(1)
    .NumOutputs(1)
    .Input(0, "workspace_stack", "a stack made by CreateScope")
    .Output(0, "has_scope", "(1) bool: whether the stack holds a workspace")
    .SetDoc("Whether a workspace stack holds a workspace.");
REGISTER_GRADIENT(HasScope, NoGradient);

}  // namespace caffe2
