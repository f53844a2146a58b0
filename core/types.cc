#include "core/types.h"

#include <cstring>
#include <new>

#include "core/enforce.h"

namespace caffe2 {

float HalfToFloat(float16 h) {
  uint32_t sign = (h.x & 0x8000u) << 16;
  uint32_t exp = (h.x >> 10) & 0x1f;
  uint32_t mant = h.x & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

float16 FloatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  uint32_t sign = (bits >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((bits >> 23) & 0xff) - 127 + 15;
  uint32_t mant = bits & 0x7fffffu;
  float16 h;
  if (((bits >> 23) & 0xff) == 0xff) {  // inf or nan
    h.x = static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  } else if (exp >= 0x1f) {
    h.x = static_cast<uint16_t>(sign | 0x7c00u);
  } else if (exp <= 0) {
    if (exp < -10) {
      h.x = static_cast<uint16_t>(sign);
    } else {  // subnormal, round to nearest even
      mant |= 0x800000u;
      uint32_t shift = static_cast<uint32_t>(14 - exp);
      uint32_t half = mant >> shift;
      uint32_t rem = mant & ((1u << shift) - 1);
      uint32_t mid = 1u << (shift - 1);
      if (rem > mid || (rem == mid && (half & 1u))) ++half;
      h.x = static_cast<uint16_t>(sign | half);
    }
  } else {
    uint32_t half = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into exponent: fine
    h.x = static_cast<uint16_t>(half);
  }
  return h;
}

namespace {

template <class T>
TypeMeta Fundamental(DataType id, const char* name) {
  TypeMeta m;
  m.id = id;
  m.itemsize = sizeof(T);
  m.name = name;
  return m;
}

TypeMeta StringMeta() {
  TypeMeta m;
  m.id = DataType::STRING;
  m.itemsize = sizeof(std::string);
  m.name = "std::string";
  m.construct = [](void* p, size_t n) {
    auto* s = static_cast<std::string*>(p);
    for (size_t i = 0; i < n; ++i) new (s + i) std::string();
  };
  m.destroy = [](void* p, size_t n) {
    auto* s = static_cast<std::string*>(p);
    for (size_t i = 0; i < n; ++i) s[i].~basic_string();
  };
  m.copy = [](const void* src, void* dst, size_t n) {
    auto* a = static_cast<const std::string*>(src);
    auto* b = static_cast<std::string*>(dst);
    for (size_t i = 0; i < n; ++i) b[i] = a[i];
  };
  return m;
}

}  // namespace

#define C2_TYPE_META(T, ID, NAME)                                        \
  template <>                                                           \
  const TypeMeta& TypeMeta::Make<T>() {                                 \
    static const TypeMeta meta = Fundamental<T>(DataType::ID, NAME);    \
    return meta;                                                        \
  }
C2_TYPE_META(float, FLOAT, "float")
C2_TYPE_META(double, DOUBLE, "double")
C2_TYPE_META(int32_t, INT32, "int")
C2_TYPE_META(int64_t, INT64, "long")
C2_TYPE_META(int16_t, INT16, "short")
C2_TYPE_META(uint16_t, UINT16, "unsigned short")
C2_TYPE_META(int8_t, INT8, "signed char")
C2_TYPE_META(uint8_t, UINT8, "unsigned char")
C2_TYPE_META(bool, BOOL, "bool")
C2_TYPE_META(float16, FLOAT16, "caffe2::float16")
#undef C2_TYPE_META

template <>
const TypeMeta& TypeMeta::Make<std::string>() {
  static const TypeMeta meta = StringMeta();
  return meta;
}

const TypeMeta& TypeMeta::FromDataType(DataType type) {
  switch (type) {
    case DataType::FLOAT: return Make<float>();
    case DataType::INT32: return Make<int32_t>();
    case DataType::BYTE: return Make<uint8_t>();
    case DataType::STRING: return Make<std::string>();
    case DataType::BOOL: return Make<bool>();
    case DataType::UINT8: return Make<uint8_t>();
    case DataType::INT8: return Make<int8_t>();
    case DataType::UINT16: return Make<uint16_t>();
    case DataType::INT16: return Make<int16_t>();
    case DataType::INT64: return Make<int64_t>();
    case DataType::FLOAT16: return Make<float16>();
    case DataType::DOUBLE: return Make<double>();
    default: break;
  }
  C2_THROW("Unknown or unsupported data type ", static_cast<int>(type), " (", DataTypeName(type), ")");
}

std::string DataTypeName(DataType type) {
  switch (type) {
    case DataType::UNDEFINED: return "UNDEFINED";
    case DataType::FLOAT: return "FLOAT";
    case DataType::INT32: return "INT32";
    case DataType::BYTE: return "BYTE";
    case DataType::STRING: return "STRING";
    case DataType::BOOL: return "BOOL";
    case DataType::UINT8: return "UINT8";
    case DataType::INT8: return "INT8";
    case DataType::UINT16: return "UINT16";
    case DataType::INT16: return "INT16";
    case DataType::INT64: return "INT64";
    case DataType::FLOAT16: return "FLOAT16";
    case DataType::DOUBLE: return "DOUBLE";
  }
  return MakeString("DataType(", static_cast<int>(type), ")");
}

}  // namespace caffe2
