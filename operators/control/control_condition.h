// The condition of If and While: input 0, a one-element bool tensor, read on the host (a GPU
// net's condition is copied there first).
#pragma once

#include "core/operator.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {

inline bool ReadCondition(const OperatorBase& op, const Tensor& condition, Tensor* scratch) {
  C2_ENFORCE(condition.numel() == 1 && condition.IsType<bool>(), "the condition '",
             op.debug_def().input(0), "' must be a one-element bool tensor, got ",
             condition.DebugString());
  return OnHost(condition, scratch).data<bool>()[0];
}

// The subnet an If or While op runs, from its NetDef argument `name`; nullptr when the argument is
// absent and not `required`.
inline std::unique_ptr<NetBase> CreateSubnet(const OperatorBase& op, const char* name,
                                             bool required) {
  if (!op.HasSingleArgumentOfType<NetDef>(name)) {
    C2_ENFORCE(!required, "the argument ", name, " (a NetDef) is required");
    return nullptr;
  }
  return CreateNet(op.GetSingleArgument<NetDef>(name, NetDef()), op.workspace());
}

}  // namespace caffe2
