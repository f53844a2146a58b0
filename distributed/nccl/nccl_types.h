// The NCCL element type of a tensor dtype (built only with NCCL).
//
// float, float16, double, int32, int64, int8 and uint8 map to their NCCL types; any other dtype
// (bool, strings, int16, ...) is refused with an error that names `what` (e.g. "input 1 ('x')")
// and lists the supported dtypes.
#pragma once

#include <nccl.h>

#include <string>

#include "core/types.h"

namespace caffe2 {

ncclDataType_t NcclTypeOf(DataType dtype, const std::string& what);
// "float, float16, double, int32, int64, int8, uint8"
std::string NcclSupportedTypeNames();

}  // namespace caffe2
