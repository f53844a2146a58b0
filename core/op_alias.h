// Operator type aliases: a second name for an op type, declared once beside the op's registration
// with REGISTER_OPERATOR_ALIAS (upstream registered Conv1D/2D/3D, MaxPool1D/2D/3D and
// AveragePool1D/2D/3D as separate ops with the same kernels; here each is one line).
//
// An alias stands for its target everywhere in core: the creators of every device and engine
// ("Conv2D_ENGINE_CUDNN" finds "Conv_ENGINE_CUDNN"), the schema, the gradient maker, and the type
// of the gradient op ("Conv2DGradient" is "ConvGradient"). Registry listings show each alias as if
// it were registered in its own right, so what Python sees is unchanged.
#pragma once

#include <string>
#include <vector>

namespace caffe2 {

// Declares `alias` as another name of `target`; an alias declared twice throws at load time.
bool RegisterOperatorAlias(const std::string& alias, const std::string& target);

// The registry key `key` stands for when it names an alias: the alias is replaced by its target,
// also in "<alias>Gradient" and with an "_ENGINE_<engine>" suffix. Empty for any other key.
std::string OperatorAliasTarget(const std::string& key);

// For listings: every key of `keys` that an alias stands for, spelled with the alias.
std::vector<std::string> AliasKeys(const std::vector<std::string>& keys);

}  // namespace caffe2

#define REGISTER_OPERATOR_ALIAS(alias, target)             \
  static const bool c2_op_alias_##alias [[maybe_unused]] = \
      ::caffe2::RegisterOperatorAlias(#alias, #target)
