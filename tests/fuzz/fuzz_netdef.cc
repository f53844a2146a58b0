// Fuzz target: a NetDef from untrusted bytes. Parses it (binary protobuf), then creates each
// operator in a fresh workspace, infers shapes and types over the net, creates the net (which
// checks blob names, engines and the executor) and asks each op for its gradient. Nothing is run.
// Every step may refuse with a caffe2 error; none may crash, leak, hang or read out of bounds.
#include <vector>

#include "core/gradient.h"
#include "core/operator.h"
#include "core/shape_inference.h"
#include "core/workspace.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  caffe2::NetDef net;
  if (!net.ParseFromArray(data, static_cast<int>(size))) return 0;
  caffe2::Workspace ws;
  for (const caffe2::OperatorDef& op : net.op()) {
    Refusable([&] { caffe2::CreateOperator(op, &ws); });
    Refusable([&] {
      std::vector<caffe2::GradientWrapper> grads(op.output_size());
      for (int i = 0; i < op.output_size(); ++i) grads[i].dense_ = op.output(i) + "_grad";
      caffe2::GetGradientForOp(op, grads);
    });
  }
  Refusable([&] { caffe2::InferBlobShapesAndTypesFromWorkspace(&ws, {net}); });
  Refusable([&] { ws.CreateNet(net); });
  return 0;
}
