#include "distributed/nccl/nccl_types.h"

#include <utility>
#include <vector>

#include "core/enforce.h"

namespace caffe2 {
namespace {

const std::vector<std::pair<DataType, ncclDataType_t>>& Table() {
  static const std::vector<std::pair<DataType, ncclDataType_t>> table = {
      {DataType::FLOAT, ncclFloat32},  {DataType::FLOAT16, ncclFloat16},
      {DataType::DOUBLE, ncclFloat64}, {DataType::INT32, ncclInt32},
      {DataType::INT64, ncclInt64},    {DataType::INT8, ncclInt8},
      {DataType::UINT8, ncclUint8},
  };
  return table;
}

}  // namespace

ncclDataType_t NcclTypeOf(DataType dtype, const std::string& what) {
  for (const auto& entry : Table()) {
    if (entry.first == dtype) return entry.second;
  }
  C2_THROW(what, " has dtype ", DataTypeName(dtype),
           ", which NCCL cannot carry; supported: ", NcclSupportedTypeNames());
}

std::string NcclSupportedTypeNames() {
  std::string names;
  for (const auto& entry : Table())
    names += (names.empty() ? "" : ", ") + DataTypeName(entry.first);
  return names;
}

}  // namespace caffe2
