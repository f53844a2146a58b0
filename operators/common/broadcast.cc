#include "operators/common/broadcast.h"

#include "core/argument.h"
#include "core/enforce.h"
#include "core/op_schema.h"
#include "core/tensor.h"

namespace caffe2 {

std::string ShapeString(const std::vector<int64_t>& dims) { return Tensor::DimsString(dims); }

std::vector<int64_t> ShapeDims(const TensorShape& shape) {
  return std::vector<int64_t>(shape.dims().begin(), shape.dims().end());
}

BroadcastArgs ReadBroadcastArgs(const ArgumentHelper& args, bool force_broadcast) {
  BroadcastArgs out;
  out.broadcast = force_broadcast || args.GetSingleArgument<int>("broadcast", 0) != 0;
  out.axis = args.GetSingleArgument<int>("axis", -1);
  const std::string axis_str = args.GetSingleArgument<std::string>("axis_str", "");
  const std::string order = args.GetSingleArgument<std::string>("order", "NCHW");
  if (args.HasArgument("axis")) {
    C2_ENFORCE(!args.HasArgument("axis_str"), "args axis and axis_str cannot be used together");
  } else if (args.HasArgument("axis_str")) {
    C2_ENFORCE(axis_str.size() == 1, "axis_str must be one letter of order '", order, "', got '",
               axis_str, "'");
    const size_t pos = order.find(axis_str);
    C2_ENFORCE(pos != std::string::npos, "axis_str '", axis_str, "' is not a letter of order '",
               order, "'");
    out.axis = static_cast<int>(pos);
  }
  C2_ENFORCE(out.broadcast || (!args.HasArgument("axis") && !args.HasArgument("axis_str")),
             "axis or axis_str is set but broadcast is not enabled (set broadcast=1)");
  return out;
}

OpSchema& AddBroadcastArgs(OpSchema& schema) {
  return schema
      .Arg("broadcast",
           "(int, default 0) 1: B may have fewer dims than A and is repeated over A's other dims; "
           "0: A and B must have the same shape")
      .Arg("axis",
           "(int, default -1) the dim of A where B's dims start (broadcast=1 only); -1 aligns B "
           "with A's trailing dims")
      .Arg("axis_str",
           "(string) the axis as one letter of order, e.g. \"C\" (broadcast=1 only, not with "
           "axis)")
      .Arg("order", "(string, default \"NCHW\") the dim letters axis_str is looked up in");
}

BroadcastSizes ComputeBroadcastSizes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                     const BroadcastArgs& args) {
  BroadcastSizes s;
  if (!args.broadcast) {
    C2_ENFORCE(a == b, "A ", ShapeString(a), " and B ", ShapeString(b),
               " differ in shape; set broadcast=1 to broadcast B over A");
    for (int64_t d : a) s.n *= d;
    return s;
  }
  int64_t b_size = 1, a_size = 1;
  for (int64_t d : b) b_size *= d;
  for (int64_t d : a) a_size *= d;
  const int a_nd = static_cast<int>(a.size()), b_nd = static_cast<int>(b.size());
  if (b_size == 1) {
    s.post = a_size;
    return s;
  }
  C2_ENFORCE(b_nd <= a_nd, "B ", ShapeString(b), " has more dimensions than A ", ShapeString(a),
             "; only B broadcasts");
  const int axis = args.axis == -1 ? a_nd - b_nd : args.axis;
  C2_ENFORCE(axis >= 0 && axis <= a_nd - b_nd, "broadcast axis ", args.axis, " out of range [0, ",
             a_nd - b_nd, "] for A ", ShapeString(a), " and B ", ShapeString(b));
  int first = 0, last = b_nd - 1;
  while (first < b_nd && b[first] == 1) ++first;
  while (last >= first && b[last] == 1) --last;
  for (int i = 0; i < axis + first; ++i) s.pre *= a[i];
  for (int i = first; i <= last; ++i) {
    C2_ENFORCE(a[axis + i] == b[i], "B ", ShapeString(b), " does not match A ", ShapeString(a),
               " at axis ", axis, ": B dim ", i, " is ", b[i], " but A dim ", axis + i, " is ",
               a[axis + i]);
    s.n *= b[i];
  }
  for (int i = axis + last + 1; i < a_nd; ++i) s.post *= a[i];
  return s;
}

}  // namespace caffe2
