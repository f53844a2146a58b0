// WorkspaceStack: the child workspaces the Do op runs its subnet in, kept in a blob that
// CreateScope makes and every Do of one scope shares (as upstream's detail::WorkspaceStack).
//
// A child workspace sees only the outer blobs it is bound to ({inner name: outer name} in the
// parent workspace); every other blob the subnet makes is local to the child and invisible outside.
// Each forward Do pushes a child (or, with reuse_workspace, rebinds the top one); CreateScope
// clears the stack, so a net that creates the scope on every run reuses the same children instead
// of growing the stack. Children stay alive until the stack is destroyed, so their local blobs
// persist from one run to the next as upstream's do.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace caffe2 {

class Workspace;

class WorkspaceStack {
 public:
  using Bindings = std::map<std::string, std::string>;  // inner name -> outer name

  // A child of `parent` bound by `bindings`, on top of the stack: a fresh one, or the one a
  // cleared stack kept at that depth, rebound.
  std::shared_ptr<Workspace> PushForwardWorkspace(Workspace* parent, const Bindings& bindings);
  // The top child, rebound by `bindings`; an error on an empty stack.
  std::shared_ptr<Workspace> ReuseLastForwardWorkspace(Workspace* parent, const Bindings& bindings);
  // Forgets the children pushed so far (they are kept for reuse).
  void Clear() { top_ = -1; }
  bool Empty() const { return top_ < 0; }

 private:
  std::vector<std::shared_ptr<Workspace>> workspaces_;
  int top_ = -1;
};

}  // namespace caffe2
