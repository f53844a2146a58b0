// The frame every communication op keeps, whatever its engine (ops spec §3.5). The collectives of
// both engines implement it (their bases gloo/collective_op.h and nccl/nccl_collective_op.h), and
// so do the ops that make a common world (gloo/common_world_ops_gloo.cc,
// nccl/common_world_ops_nccl.cc):
//
// - Input 0 is a common world of the op's engine (CreateCommonWorld / CloneCommonWorld).
// - `status_blob` (string, ""): when set, the blob is created with the op; a failure on the wire
//   writes an int32 tensor [1] into it. Success never writes it, and neither does a bad input.
// - A failure on the wire (a peer died, a connection broke, a peer did not answer within the
//   timeout) is thrown as a CollectiveIoError, whether or not a status blob is set, with a message
//   that names the op and, where the engine can tell, the peers that are gone. Python sees it as
//   gloo.python.IoError, a RuntimeError. (Upstream returned false when a status blob was set,
//   which Python also saw as a RuntimeError.)
#pragma once

#include <exception>
#include <string>

#include "core/enforce.h"
#include "core/operator.h"
#include "core/workspace.h"

namespace caffe2 {

// A collective, a rendezvous or a communicator setup failed on the wire.
class CollectiveIoError : public EnforceNotMet {
 public:
  using EnforceNotMet::EnforceNotMet;
};

// Mixed into each engine's op base beside its Operator class:
//   class GlooOpBase : public OperatorBase, public CollectiveOp { ... };
class CollectiveOp {
 public:
  virtual ~CollectiveOp() = default;

 protected:
  // `op` is the operator this frame belongs to (already constructed); creates the status blob.
  CollectiveOp(const OperatorBase& op, Workspace* ws);

  // Runs RunCollective(). An exception that WireFailure recognizes writes the status blob and is
  // rethrown as WireFailure gives it; any other exception propagates unchanged.
  bool RunReportingWireFailures();

  // The collective itself, on input 0's world.
  virtual void RunCollective() = 0;

  // What to throw for `error` when it is a failure on the wire (the engine's own exception, or a
  // CollectiveIoError, explained as the engine can), or null when it is not one.
  virtual std::exception_ptr WireFailure(std::exception_ptr error) = 0;

  // "<Type> '<op name or first output>'", for messages.
  std::string What() const;

 private:
  const OperatorBase& op_;
  Workspace* ws_;
  std::string status_blob_;
};

// The WireFailure of the ops that make a common world (CreateCommonWorld, CloneCommonWorld, every
// engine): a store that timed out (StoreHandlerTimeoutException) or a CollectiveIoError.
std::exception_ptr RendezvousWireFailure(std::exception_ptr error);

}  // namespace caffe2
