// Element types of tensors and their mapping to TensorProto.DataType (spec §1.2).
//
// A TypeMeta describes one element type: its DataType, size and, for non-trivial types
// (std::string), how to construct, destroy and copy arrays of it.
//
// C2_FOR_EACH_DATA_TYPE is the one table of element types; everything per type derives from it:
// the TypeMetas, VisitDataType, DataTypeName, the numpy names (python/src/feed_fetch.cc) and the
// TensorProto encoding (core/serialization.cc).
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

// X(ID, C++ type, TypeMeta name (upstream's spelling), numpy dtype name). BYTE is not in the table:
// it is UINT8 in memory and only says how a TensorProto stores the bytes.
#define C2_FOR_EACH_DATA_TYPE(X)                    \
  X(FLOAT, float, "float", "float32")               \
  X(DOUBLE, double, "double", "float64")            \
  X(INT32, int32_t, "int", "int32")                 \
  X(INT64, int64_t, "long", "int64")                \
  X(INT16, int16_t, "short", "int16")               \
  X(UINT16, uint16_t, "unsigned short", "uint16")   \
  X(INT8, int8_t, "signed char", "int8")            \
  X(UINT8, uint8_t, "unsigned char", "uint8")       \
  X(BOOL, bool, "bool", "bool")                     \
  X(FLOAT16, float16, "caffe2::float16", "float16") \
  X(STRING, std::string, "std::string", "object")

template <class T>
struct TypeTag {
  using type = T;
};

// Throws "unknown or unsupported data type N (NAME)".
[[noreturn]] void ThrowUnsupportedDataType(DataType type);

// Calls f(TypeTag<T>{}) with the C++ type T of `type` (BYTE: uint8_t) and returns what f returns
// (the same type for every T). UNDEFINED or an unknown value throws.
template <class F>
decltype(auto) VisitDataType(DataType type, F&& f) {
  switch (type) {
#define C2_VISIT_DATA_TYPE(ID, T, NAME, NUMPY) \
  case DataType::ID:                           \
    return f(TypeTag<T>{});
    C2_FOR_EACH_DATA_TYPE(C2_VISIT_DATA_TYPE)
#undef C2_VISIT_DATA_TYPE
    case DataType::BYTE:
      return f(TypeTag<uint8_t>{});
    default:
      break;
  }
  ThrowUnsupportedDataType(type);
}

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
  static const TypeMeta& FromDataType(int type) {
    return FromDataType(static_cast<DataType>(type));
  }

  bool initialized() const { return itemsize != 0; }
  bool operator==(const TypeMeta& o) const { return id == o.id && itemsize == o.itemsize; }
  bool operator!=(const TypeMeta& o) const { return !(*this == o); }
};

#define C2_DECLARE_TYPE_META(ID, T, NAME, NUMPY) \
  template <>                                    \
  const TypeMeta& TypeMeta::Make<T>();
C2_FOR_EACH_DATA_TYPE(C2_DECLARE_TYPE_META)
#undef C2_DECLARE_TYPE_META

// True for every type of the table and BYTE; false for UNDEFINED and values outside the enum.
bool IsElementType(DataType type);

// "FLOAT", "BYTE", "UNDEFINED", ...; "DataType(N)" for a value outside the enum.
std::string DataTypeName(DataType type);

// numpy's name of the dtype that holds `type` ("float32"; "object" for STRING; BYTE is "uint8").
// UNDEFINED or an unknown value throws.
const char* NumpyDtypeName(DataType type);

}  // namespace caffe2
