// Predictor (spec §5.13): runs an init net once in a child workspace, then runs a predict net on
// inputs bound positionally to its external inputs, returning its external outputs.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "caffe2/proto/caffe2.pb.h"
#include "core/workspace.h"

namespace caffe2 {

class NetBase;

class Predictor {
 public:
  // `parent` may be null. Throws when either net fails to run or be created.
  Predictor(const NetDef& init_net, const NetDef& run_net, Workspace* parent = nullptr);

  // inputs.size() must not exceed the number of external inputs; each input tensor is shared (not
  // copied) into the blob of the same position. Returns the external outputs (shared, not copied).
  std::vector<const Tensor*> Run(const std::vector<const Tensor*>& inputs);
  std::vector<const Tensor*> RunMap(const std::map<std::string, const Tensor*>& inputs);

  const NetDef& def() const { return run_net_; }
  Workspace* workspace() { return &ws_; }

 private:
  std::vector<const Tensor*> RunAndCollect();
  NetDef run_net_;
  Workspace ws_;
  NetBase* net_ = nullptr;
};

}  // namespace caffe2
