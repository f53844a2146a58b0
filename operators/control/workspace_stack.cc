// WorkspaceStack (contract in workspace_stack.h).
#include "operators/control/workspace_stack.h"

#include "core/enforce.h"
#include "core/workspace.h"

namespace caffe2 {

std::shared_ptr<Workspace> WorkspaceStack::PushForwardWorkspace(Workspace* parent,
                                                                const Bindings& bindings) {
  ++top_;
  if (top_ == static_cast<int>(workspaces_.size())) {
    workspaces_.push_back(std::make_shared<Workspace>(parent, bindings));
  } else {
    workspaces_[top_]->AddBlobMapping(parent, bindings);
  }
  return workspaces_[top_];
}

std::shared_ptr<Workspace> WorkspaceStack::ReuseLastForwardWorkspace(Workspace* parent,
                                                                     const Bindings& bindings) {
  C2_ENFORCE(!Empty(), "no workspace to reuse: the workspace stack is empty");
  workspaces_[top_]->AddBlobMapping(parent, bindings);
  return workspaces_[top_];
}

}  // namespace caffe2
