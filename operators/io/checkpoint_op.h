// Checkpoint (alias Snapshot): a Save that runs every `every` iterations (spec §5.12).
//
// Inputs: 0 the iteration counter (an int64 tensor of one element, on any device), then the blobs
// to save. Every input, the counter included, is saved. Outputs: none.
// Arguments: db (string, required) a printf pattern receiving the iteration, e.g.
// "ckpt_%05d.minidb" (integer conversions d, i, u, x, X, o; "%%" is a literal percent sign);
// every (int, 1); and the Save arguments db_type, absolute_path, strip_prefix,
// blob_name_overrides.
#pragma once

#include <cstdint>
#include <string>

#include "operators/io/save_op.h"

namespace caffe2 {

// Replaces each integer conversion of `pattern` with `iter`; throws on any other conversion.
std::string FormatDBPattern(const std::string& pattern, int64_t iter);

class CheckpointOp final : public SaveOp {
 public:
  CheckpointOp(const OperatorDef& def, Workspace* ws);

 protected:
  bool RunOnDevice() override;

 private:
  int64_t every_;
};

}  // namespace caffe2
