// What RecurrentNetwork and RecurrentNetworkGradient share (contracts in recurrent_network_op.cc
// and recurrent_network_gradient_op.cc): the argument lists upstream's caffe2.python.recurrent
// writes, the per-timestep workspaces, and the links that make a step's blobs views of one slice
// of a sequence tensor.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/operator.h"
#include "core/workspace.h"

namespace caffe2 {

// A step blob `internal` viewing `external`[t + offset, t + offset + window) at timestep t.
struct RnnLink {
  std::string internal, external;
  int offset, window;
};

// Output `dst` of the forward op: the recurrent state `src` from `offset` (>= 0) on, or its last
// -offset steps (offset < 0).
struct RnnAlias {
  std::string src, dst;
  int offset;
};

// The workspaces the timesteps ran in (the forward op's last output): one per timestep when the op
// has a backward pass (its gradient reruns each step in the workspace that step's forward ran
// in), else one reused by every step. Each is a child of the op's workspace: blobs that exist
// there are shared, the rest are the step's own.
struct RnnStepWorkspaces {
  std::vector<std::shared_ptr<Workspace>> steps;
};

// The links named by the arguments <prefix>_internal, <prefix>_external, <prefix>_offset and
// <prefix>_window (default 1 each); prefix "link" or "backward_link".
std::vector<RnnLink> ReadRnnLinks(const OperatorBase& op, const std::string& prefix);
std::vector<RnnAlias> ReadRnnAliases(const OperatorBase& op);

// Makes the step blob link.internal of `step` (a blob of the step's own) a view of its window of
// link.external, a tensor of `parent`, at timestep t.
void ApplyRnnLink(const RnnLink& link, int64_t t, Workspace* parent, Workspace* step);

// Sets the step's own int32 (1) timestep blob `name` to t.
void SetRnnTimestep(const std::string& name, int64_t t, Workspace* step);

// The net `def` of workspace `step`, made on first use (under `name` when def has none).
NetBase* RnnStepNet(const NetDef& def, const std::string& name, Workspace* step);

}  // namespace caffe2
