#include "distributed/op_helpers.h"

#include <vector>

namespace caffe2 {

const StoreHandlerPtr& StoreHandlerInput(const OperatorBase& op, int i) {
  const Blob& blob = op.InputBlob(i);
  C2_ENFORCE(blob.IsType<StoreHandlerPtr>(), "input ", i, " ('", op.debug_def().input(i),
             "') must be a store handler (from FileStoreHandlerCreate or RedisStoreHandlerCreate)"
             " but holds ",
             blob.TypeName());
  const StoreHandlerPtr& handler = blob.Get<StoreHandlerPtr>();
  C2_ENFORCE(handler != nullptr, "input ", i, " ('", op.debug_def().input(i),
             "') holds no store handler");
  return handler;
}

void WriteStatusBlob(Workspace* ws, const std::string& status_blob, int code) {
  if (status_blob.empty()) return;
  Tensor* status = ws->CreateBlob(status_blob)->GetMutableTensor(Device{});
  status->Resize(std::vector<int64_t>{1});
  *status->mutable_data<int32_t>() = code;
}

}  // namespace caffe2
