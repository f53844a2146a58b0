// Links, aliases and step nets of RecurrentNetwork (contracts in recurrent_network_op.h).
#include <cstring>

#include "core/net.h"
#include "operators/rnn/recurrent_network_op.h"

namespace caffe2 {

std::vector<RnnLink> ReadRnnLinks(const OperatorBase& op, const std::string& prefix) {
  const auto internal = op.GetRepeatedArgument<std::string>(prefix + "_internal", {});
  const auto external = op.GetRepeatedArgument<std::string>(prefix + "_external", {});
  const auto offset = op.GetRepeatedArgument<int>(prefix + "_offset", {});
  auto window = op.GetRepeatedArgument<int>(prefix + "_window", {});
  if (window.empty()) window.assign(internal.size(), 1);
  C2_ENFORCE(external.size() == internal.size() && offset.size() == internal.size() &&
                 window.size() == internal.size(),
             prefix, "_internal, _external, _offset and _window must have one entry per link, got ",
             internal.size(), ", ", external.size(), ", ", offset.size(), " and ", window.size());
  std::vector<RnnLink> links;
  for (size_t i = 0; i < internal.size(); ++i) {
    C2_ENFORCE(window[i] >= 1, prefix, "_window[", i, "] must be positive, got ", window[i]);
    links.push_back({internal[i], external[i], offset[i], window[i]});
  }
  return links;
}

std::vector<RnnAlias> ReadRnnAliases(const OperatorBase& op) {
  const auto src = op.GetRepeatedArgument<std::string>("alias_src", {});
  const auto dst = op.GetRepeatedArgument<std::string>("alias_dst", {});
  const auto offset = op.GetRepeatedArgument<int>("alias_offset", {});
  C2_ENFORCE(dst.size() == src.size() && offset.size() == src.size(),
             "alias_src, alias_dst and alias_offset must have one entry per alias, got ",
             src.size(), ", ", dst.size(), " and ", offset.size());
  std::vector<RnnAlias> aliases;
  for (size_t i = 0; i < src.size(); ++i) aliases.push_back({src[i], dst[i], offset[i]});
  return aliases;
}

void ApplyRnnLink(const RnnLink& link, int64_t t, Workspace* parent, Workspace* step) {
  Blob* blob = parent->GetBlob(link.external);
  C2_ENFORCE(blob != nullptr && blob->IsTensor(), "the linked blob '", link.external,
             "' (of step blob '", link.internal, "') is not a tensor of the op's workspace");
  Tensor* external = blob->GetMutable<Tensor>();
  const int64_t begin = t + link.offset;
  C2_ENFORCE(external->ndim() >= 1 && begin >= 0 && begin + link.window <= external->dim(0),
             "step ", t, ": the window [", begin, ", ", begin + link.window, ") of '",
             link.external, "' ", Tensor::DimsString(external->dims()), " for step blob '",
             link.internal, "' is out of range");
  std::vector<int64_t> dims = external->dims();
  const size_t row_bytes = external->nbytes() / std::max<int64_t>(dims[0], 1);
  dims[0] = link.window;
  char* base = static_cast<char*>(external->raw_mutable_data(external->meta()));
  Tensor* internal = step->CreateLocalBlob(link.internal)->GetMutable<Tensor>();
  internal->Resize(dims);
  internal->ShareExternalPointer(base + begin * row_bytes, external->meta(),
                                 link.window * row_bytes);
}

void SetRnnTimestep(const std::string& name, int64_t t, Workspace* step) {
  Tensor* ts = step->CreateLocalBlob(name)->GetMutable<Tensor>();
  ts->Resize(1);
  ts->mutable_data<int32_t>()[0] = static_cast<int32_t>(t);
}

NetBase* RnnStepNet(const NetDef& def, const std::string& name, Workspace* step) {
  NetDef named = def;
  if (named.name().empty()) named.set_name(name);
  NetBase* net = step->GetNet(named.name());
  return net != nullptr ? net : step->CreateNet(named, true);
}

}  // namespace caffe2
