#include "distributed/collective.h"

#include "core/argument.h"
#include "distributed/op_helpers.h"
#include "distributed/store/store_handler.h"

namespace caffe2 {

CollectiveOp::CollectiveOp(const OperatorBase& op, Workspace* ws)
    : op_(op),
      ws_(ws),
      status_blob_(
          ArgumentHelper(op.debug_def()).GetSingleArgument<std::string>("status_blob", "")) {
  if (!status_blob_.empty()) ws->CreateBlob(status_blob_);
}

bool CollectiveOp::RunReportingWireFailures() {
  try {
    RunCollective();
    return true;
  } catch (...) {
    const std::exception_ptr failure = WireFailure(std::current_exception());
    if (!failure) throw;
    WriteStatusBlob(ws_, status_blob_, 1);
    std::rethrow_exception(failure);
  }
}

std::string CollectiveOp::What() const {
  const OperatorDef& def = op_.debug_def();
  const std::string& label =
      !def.name().empty() ? def.name() : (def.output_size() ? def.output(0) : "");
  return op_.type() + " '" + label + "'";
}

std::exception_ptr RendezvousWireFailure(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const StoreHandlerTimeoutException&) {
    return error;
  } catch (const CollectiveIoError&) {
    return error;
  } catch (...) {
    return nullptr;
  }
}

}  // namespace caffe2
