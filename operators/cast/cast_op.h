// Cast: [X] -> [Y], Y = X converted to `to` (spec ops §1.2.11). `to` is a TensorProto.DataType as
// an int or its name ("FLOAT", "int32", ...), FLOAT by default. Numeric types and BOOL convert
// among each other (FLOAT16 through float; a nonzero value becomes true); STRING is not castable.
// Every value goes through double (as the CPU kernel does, so the CUDA kernel gives the same
// bits); a float value out of the target integer type's range converts differently on the two
// devices (undefined in C++; the GPU saturates). Allow in-place 0->0.
// Gradient: Cast(dY) with to=from_type and from_type=to; asking for it without `from_type` is an
// error. FloatToHalf / HalfToFloat: [X] -> [Y] float <-> float16, gradients each other.
#pragma once

#include <string>

#include "core/argument.h"
#include "core/tensor.h"
#include "core/types.h"

namespace caffe2 {

// Reads a DataType argument stored as an int or as a name; `fallback` when absent.
DataType DataTypeArg(const ArgumentHelper& args, const std::string& name, DataType fallback);
// The `to` of a Cast def, checked to be a type a tensor can be cast to.
DataType CastTarget(const OperatorDef& def);
// FloatToHalf's X is float, HalfToFloat's float16.
void CheckHalfFloatInput(const Tensor& X, bool to_half);

}  // namespace caffe2
