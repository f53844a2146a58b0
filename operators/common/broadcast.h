// Legacy Caffe2 broadcasting of a binary op's second input (spec ops §1.2.10), device-neutral.
//
// Arguments: `broadcast` (int, 0), `axis` (int, -1), `axis_str` (one letter of `order`), `order`
// ("NCHW"). Without broadcast=1, A and B must have identical shapes and neither axis nor axis_str
// may be set. With broadcast=1, B's rank is at most A's; B's leading and trailing size-1 dims are
// stripped and what remains must equal a contiguous run of A's dims starting at `axis` (default
// A.ndim - B.ndim, counted on the unstripped B). A is then viewed as (pre, n, post) and B as (n).
// A B with one element acts as a scalar (n = 1, post = A.numel()). No two-sided broadcasting.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "caffe2/proto/caffe2.pb.h"

namespace caffe2 {

class ArgumentHelper;
class OpSchema;

struct BroadcastArgs {
  bool broadcast = false;
  int axis = -1;  // -1: align B with A's trailing dims
};

// Reads and checks the broadcast arguments of a def ("Args axis and axis_str cannot be used
// together", an unknown axis_str letter, axis/axis_str without broadcast). With force_broadcast
// (SumReduceLike) the `broadcast` argument is ignored and treated as 1.
BroadcastArgs ReadBroadcastArgs(const ArgumentHelper& args, bool force_broadcast = false);

// Declares broadcast, axis, axis_str and order on the schema of a binary op whose kernel reads them
// with ReadBroadcastArgs; returns the schema. Applied after the schema's chain (as in
// operators/conv/conv_pool_schema.h): `static OpSchema& x = AddBroadcastArgs(c2_op_schema_Sub);`.
OpSchema& AddBroadcastArgs(OpSchema& schema);

// A viewed as (pre, n, post) against B viewed as (n).
struct BroadcastSizes {
  int64_t pre = 1;
  int64_t n = 1;
  int64_t post = 1;
};

// The sizes for B against A; throws with both shapes when they do not broadcast. Without
// broadcast, the shapes must be equal and the result is (1, numel, 1).
BroadcastSizes ComputeBroadcastSizes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                     const BroadcastArgs& args);

// "(2, 3)"
std::string ShapeString(const std::vector<int64_t>& dims);

// Dims of a TensorShape proto.
std::vector<int64_t> ShapeDims(const TensorShape& shape);

}  // namespace caffe2
