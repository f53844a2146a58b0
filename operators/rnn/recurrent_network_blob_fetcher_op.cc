// RecurrentNetworkBlobFetcher: [step_workspaces (a RecurrentNetwork's last output)] -> [names (1-d
// string)]: copies every tensor of every step workspace into the op's workspace as
// `<prefix>_<blob><step>` (upstream's naming; `prefix` defaults to "rnn") and lists the names, so
// that a net's intermediate step values can be fetched
// (caffe2.python.recurrent.retrieve_step_blobs). A forward-only RecurrentNetwork keeps one step
// workspace, so only its last step is there. CPU only; no gradient.
#include "core/gradient.h"
#include "core/workspace.h"
#include "operators/rnn/recurrent_network_op.h"

namespace caffe2 {
namespace {

class RecurrentNetworkBlobFetcherOp final : public Operator<CPUContext> {
 public:
  RecurrentNetworkBlobFetcherOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), prefix_(GetSingleArgument<std::string>("prefix", "rnn")) {}
  bool RunOnDevice() override {
    C2_ENFORCE(InputBlob(0).IsType<RnnStepWorkspaces>(), "the blob '", debug_def().input(0),
               "' holds no step workspaces (the last output of a RecurrentNetwork)");
    const auto& steps = InputObject<RnnStepWorkspaces>(0).steps;
    std::vector<std::string> names;
    for (size_t i = 0; i < steps.size(); ++i) {
      for (const std::string& blob : steps[i]->LocalBlobs()) {
        const Blob* source = steps[i]->GetBlob(blob);
        if (source == nullptr || !source->IsTensor()) continue;
        const Tensor& tensor = source->Get<Tensor>();
        if (!tensor.initialized()) continue;
        names.push_back(prefix_ + "_" + blob + std::to_string(i));
        workspace()->CreateBlob(names.back())->GetMutable<Tensor>()->CopyFrom(tensor);
      }
    }
    Tensor* out = Output(0);
    out->Resize(static_cast<int64_t>(names.size()));
    std::string* o = out->mutable_data<std::string>();
    for (size_t i = 0; i < names.size(); ++i) o[i] = names[i];
    return true;
  }

 private:
  std::string prefix_;
};

}  // namespace

REGISTER_CPU_OPERATOR(RecurrentNetworkBlobFetcher, RecurrentNetworkBlobFetcherOp);
OPERATOR_SCHEMA(RecurrentNetworkBlobFetcher)
    .NumInputs(1)
    .NumOutputs(1)
    .Arg("prefix", "prefix of the copied blobs' names (default rnn)")
    .Input(0, "step_workspaces", "the last output of a RecurrentNetwork")
    .Output(0, "names", "1-d string tensor: the names of the copied blobs")
    .SetDoc("Copies the blobs of a RecurrentNetwork's step workspaces into the workspace.");
REGISTER_GRADIENT(RecurrentNetworkBlobFetcher, NoGradient);

}  // namespace caffe2
