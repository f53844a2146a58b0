#include "operators/io/checkpoint_op.h"

#include <cctype>
#include <cstdio>

#include "core/gradient.h"
#include "core/workspace.h"
#include "operators/io/db_path.h"

namespace caffe2 {

std::string FormatDBPattern(const std::string& pattern, int64_t iter) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    if (i + 1 < pattern.size() && pattern[i + 1] == '%') {
      out += '%';
      ++i;
      continue;
    }
    size_t j = i + 1;
    std::string spec = "%";
    while (j < pattern.size() && std::string("-+ #0").find(pattern[j]) != std::string::npos) {
      spec += pattern[j++];
    }
    while (j < pattern.size() &&
           (std::isdigit(static_cast<unsigned char>(pattern[j])) || pattern[j] == '.')) {
      spec += pattern[j++];
    }
    while (j < pattern.size() && std::string("hljzt").find(pattern[j]) != std::string::npos) ++j;
    C2_ENFORCE(j < pattern.size() && std::string("diuxXo").find(pattern[j]) != std::string::npos,
               "db pattern '", pattern, "': the conversion at position ", i,
               " must be an integer one such as %d or %05d");
    const char conv = pattern[j];
    spec += conv == 'd' || conv == 'i' ? "lld" : std::string("ll") + conv;
    char buf[64];
    std::snprintf(buf, sizeof(buf), spec.c_str(), static_cast<long long>(iter));
    out += buf;
    i = j;
  }
  return out;
}

CheckpointOp::CheckpointOp(const OperatorDef& def, Workspace* ws)
    : SaveOp(def, ws), every_(GetSingleArgument<int64_t>("every", 1)) {
  C2_ENFORCE(every_ > 0, "argument 'every' must be > 0, got ", every_);
  FormatDBPattern(db_pattern_, 0);  // reports a bad pattern when the op is created
}

bool CheckpointOp::RunOnDevice() {
  const Tensor& counter = Input(0);
  C2_ENFORCE(counter.IsType<int64_t>() && counter.numel() == 1, "input 0 ('", debug_def().input(0),
             "') must be the int64 iteration counter of one element, got ", counter.DebugString());
  int64_t iter = 0;
  if (counter.device().type == kCPU) {
    iter = counter.data<int64_t>()[0];
  } else {
    Tensor host;
    host.CopyFrom(counter);
    iter = host.data<int64_t>()[0];
  }
  if (iter % every_ == 0) {
    SaveTo(FullDBPath(*workspace(), FormatDBPattern(db_pattern_, iter), absolute_path_));
  }
  return true;
}

REGISTER_CPU_OPERATOR(Checkpoint, CheckpointOp);
REGISTER_CPU_OPERATOR(Snapshot, CheckpointOp);
REGISTER_CUDA_OPERATOR(Checkpoint, CheckpointOp);

OPERATOR_SCHEMA(Checkpoint)
    .NumInputs(1, OpSchema::kInf)
    .NumOutputs(0)
    .SetDoc(R"DOC(
Every `every` iterations, saves all inputs (the int64 iteration counter first) into a new DB whose
path is `db` formatted with the iteration (e.g. "model_%05d.minidb").
)DOC")
    .Arg("db", "(string) printf pattern of the DB path, receiving the iteration", true)
    .Arg("db_type", "(string) the DB type", true)
    .Arg("every", "(int, default 1) save when iteration % every == 0")
    .Arg("absolute_path", "(int, default 0) use the path as given instead of under the root folder")
    .Arg("strip_prefix", "(string) remove everything up to this prefix from each blob name")
    .Arg("blob_name_overrides", "(strings) the names to save the inputs under, one per input")
    .Input(0, "iteration", "int64 tensor of one element")
    .Input(1, "X", "blobs to save");

OPERATOR_SCHEMA(Snapshot)
    .NumInputs(1, OpSchema::kInf)
    .NumOutputs(0)
    .SetDoc("Alias of Checkpoint.")
    .Arg("db", "(string) printf pattern of the DB path, receiving the iteration", true)
    .Arg("db_type", "(string) the DB type", true)
    .Arg("every", "(int, default 1) save when iteration % every == 0")
    .Arg("absolute_path", "(int, default 0) use the path as given instead of under the root folder")
    .Arg("strip_prefix", "(string) remove everything up to this prefix from each blob name")
    .Arg("blob_name_overrides", "(strings) the names to save the inputs under, one per input");

REGISTER_GRADIENT(Checkpoint, ShouldNotDoGradient);
REGISTER_GRADIENT(Snapshot, ShouldNotDoGradient);

}  // namespace caffe2
