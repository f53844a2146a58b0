// Element types of tensors and their mapping to TensorProto.DataType (spec §1.2).
//
// A TypeMeta describes one element type: its DataType, size and, for non-trivial types
// (std::string), how to construct, destroy and copy arrays of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace caffe2 {

// Values equal TensorProto.DataType; there is no 11.
enum class DataType : int {
  UNDEFINED = 0,
  FLOAT = 1,
  INT32 = 2,
  BYTE = 3,
  STRING = 4,
  BOOL = 5,
  UINT8 = 6,
  INT8 = 7,
  UINT16 = 8,
  INT16 = 9,
  INT64 = 10,
  FLOAT16 = 12,
  DOUBLE = 13,
};

// IEEE half precision storage: arithmetic happens after conversion to float.
struct float16 {
  uint16_t x = 0;
};
float HalfToFloat(float16 h);
float16 FloatToHalf(float f);

struct TypeMeta {
  DataType id = DataType::UNDEFINED;
  size_t itemsize = 0;
  const char* name = "nullptr (uninitialized)";
  // Null for trivially copyable types.
  void (*construct)(void* ptr, size_t n) = nullptr;
  void (*destroy)(void* ptr, size_t n) = nullptr;
  void (*copy)(const void* src, void* dst, size_t n) = nullptr;

  template <class T>
  static const TypeMeta& Make();
  // The meta of a DataType; BYTE maps to uint8. Throws for UNDEFINED or unknown values.
  static const TypeMeta& FromDataType(DataType type);
  static const TypeMeta& FromDataType(int type) { return FromDataType(static_cast<DataType>(type)); }

  bool initialized() const { return itemsize != 0; }
  bool operator==(const TypeMeta& o) const { return id == o.id && itemsize == o.itemsize; }
  bool operator!=(const TypeMeta& o) const { return !(*this == o); }
};

template <> const TypeMeta& TypeMeta::Make<float>();
template <> const TypeMeta& TypeMeta::Make<double>();
template <> const TypeMeta& TypeMeta::Make<int32_t>();
template <> const TypeMeta& TypeMeta::Make<int64_t>();
template <> const TypeMeta& TypeMeta::Make<int16_t>();
template <> const TypeMeta& TypeMeta::Make<uint16_t>();
template <> const TypeMeta& TypeMeta::Make<int8_t>();
template <> const TypeMeta& TypeMeta::Make<uint8_t>();
template <> const TypeMeta& TypeMeta::Make<bool>();
template <> const TypeMeta& TypeMeta::Make<float16>();
template <> const TypeMeta& TypeMeta::Make<std::string>();

std::string DataTypeName(DataType type);

}  // namespace caffe2
