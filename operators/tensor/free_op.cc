#include "operators/tensor/free_op.h"

#include <limits>

#include "core/gradient.h"

namespace caffe2 {

REGISTER_CPU_OPERATOR(Free, FreeOp);
OPERATOR_SCHEMA(Free)
    .NumInputs(1, std::numeric_limits<int>::max())
    .SameNumberOfOutput()
    .EnforceOneToOneInplace()
    .Input(0, "X1..Xk", "Blobs to release")
    .Output(0, "X1..Xk", "The same blobs, now empty")
    .SetDoc("Releases the contents of the blobs (they must be given as both inputs and outputs).");
REGISTER_GRADIENT(Free, ShouldNotDoGradient);

}  // namespace caffe2
