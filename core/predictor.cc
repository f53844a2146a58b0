#include "core/predictor.h"

#include "core/net.h"

namespace caffe2 {

Predictor::Predictor(const NetDef& init_net, const NetDef& run_net, Workspace* parent)
    : run_net_(run_net), ws_(parent) {
  C2_ENFORCE(ws_.RunNetOnce(init_net), "Predictor: init net ", init_net.name(), " failed");
  for (const auto& input : run_net_.external_input()) {
    if (!ws_.HasBlob(input)) ws_.CreateBlob(input)->GetMutableTensor(Device{kCPU, 0});
  }
  if (!run_net_.has_name() || run_net_.name().empty()) run_net_.set_name("predict_net");
  net_ = ws_.CreateNet(run_net_, true);
}

std::vector<const Tensor*> Predictor::Run(const std::vector<const Tensor*>& inputs) {
  C2_ENFORCE(static_cast<int>(inputs.size()) <= run_net_.external_input_size(), "Predictor got ",
             inputs.size(), " inputs but net ", run_net_.name(), " has only ",
             run_net_.external_input_size(), " external inputs");
  for (size_t i = 0; i < inputs.size(); ++i) {
    Blob* blob = ws_.GetBlob(run_net_.external_input(static_cast<int>(i)));
    blob->GetMutableTensor(inputs[i]->device())->ShareData(*inputs[i]);
  }
  return RunAndCollect();
}

std::vector<const Tensor*> Predictor::RunMap(const std::map<std::string, const Tensor*>& inputs) {
  for (const auto& kv : inputs) {
    Blob* blob = ws_.GetBlob(kv.first);
    C2_ENFORCE(blob != nullptr, "Predictor: unknown input blob ", kv.first);
    blob->GetMutableTensor(kv.second->device())->ShareData(*kv.second);
  }
  return RunAndCollect();
}

std::vector<const Tensor*> Predictor::RunAndCollect() {
  C2_ENFORCE(net_->Run(), "Predictor: net ", run_net_.name(), " failed");
  std::vector<const Tensor*> outputs;
  for (const auto& name : run_net_.external_output()) {
    const Blob* blob = ws_.GetBlob(name);
    C2_ENFORCE(blob && blob->IsType<Tensor>(), "Predictor: output ", name, " is not a tensor");
    outputs.push_back(&blob->Get<Tensor>());
  }
  return outputs;
}

}  // namespace caffe2
