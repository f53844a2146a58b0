// Helpers shared by the distributed operators: the store ops, and the Gloo and NCCL collectives.
#pragma once

#include <string>

#include "core/operator.h"
#include "core/workspace.h"
#include "distributed/store/store_handler.h"

namespace caffe2 {

// Input i of `op` as a store handler (FileStoreHandlerCreate / RedisStoreHandlerCreate); an error
// names the blob and what it holds otherwise.
const StoreHandlerPtr& StoreHandlerInput(const OperatorBase& op, int i);

// Writes `code` into the int32 blob `status_blob` (the collectives' `status_blob` argument: 0 ok,
// 1 a peer or the store failed); nothing when the name is empty.
void WriteStatusBlob(Workspace* ws, const std::string& status_blob, int code);

}  // namespace caffe2
