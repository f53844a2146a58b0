// TensorProtosDBInput (ops spec §2.3): reads records of serialized TensorProtos from a DBReader and
// outputs them batched, one output per proto.
//
// Input: reader (a DBReader blob, from CreateDB). Outputs: out_0 ... out_{k-1}; every record must
// hold exactly k protos. Argument batch_size (int, default 0):
//   > 0: batch_size records are read (in reader order); output i has shape
//        [batch_size] + record.protos[i].dims and the proto's element type (BYTE -> uint8, INT32,
//        FLOAT, STRING, ...). Every record must agree on each proto's dims and type.
//   = 0: one record, each proto deserialized as it is.
// device_detail of the protos is ignored. The next batch is prepared in the background
// (PrefetchOperator; `no_prefetch` runs inline). Errors name the DB, the record key and the
// problem.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "operators/io/prefetch_op.h"

namespace caffe2 {

class TensorProtosDBInputOp final : public PrefetchOperator {
 public:
  TensorProtosDBInputOp(const OperatorDef& def, Workspace* ws);
  ~TensorProtosDBInputOp() override { Finalize(); }

 protected:
  void ReadInputs() override;
  void Prefetch() override;
  void CopyPrefetched() override;

 private:
  const int batch_size_;
  std::string db_name_;                     // "<type> DB '<source>'", for errors
  std::vector<std::string> keys_, values_;  // the raw records of the batch in flight
  std::vector<std::unique_ptr<Tensor>> prefetched_;
};

}  // namespace caffe2
