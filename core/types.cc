#include "core/types.h"

#include <cstring>
#include <new>
#include <type_traits>

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
TypeMeta MakeMeta(DataType id, const char* name) {
  TypeMeta m;
  m.id = id;
  m.itemsize = sizeof(T);
  m.name = name;
  if constexpr (!std::is_trivially_copyable_v<T>) {
    m.construct = [](void* p, size_t n) {
      for (size_t i = 0; i < n; ++i) new (static_cast<T*>(p) + i) T();
    };
    m.destroy = [](void* p, size_t n) {
      for (size_t i = 0; i < n; ++i) static_cast<T*>(p)[i].~T();
    };
    m.copy = [](const void* src, void* dst, size_t n) {
      for (size_t i = 0; i < n; ++i) static_cast<T*>(dst)[i] = static_cast<const T*>(src)[i];
    };
  }
  return m;
}

}  // namespace

#define C2_DEFINE_TYPE_META(ID, T, NAME, NUMPY)                   \
  template <>                                                     \
  const TypeMeta& TypeMeta::Make<T>() {                           \
    static const TypeMeta meta = MakeMeta<T>(DataType::ID, NAME); \
    return meta;                                                  \
  }
C2_FOR_EACH_DATA_TYPE(C2_DEFINE_TYPE_META)
#undef C2_DEFINE_TYPE_META

void ThrowUnsupportedDataType(DataType type) {
  C2_THROW("Unknown or unsupported data type ", static_cast<int>(type), " (", DataTypeName(type),
           ")");
}

const TypeMeta& TypeMeta::FromDataType(DataType type) {
  return *VisitDataType(type, [](auto tag) { return &Make<typename decltype(tag)::type>(); });
}

bool IsElementType(DataType type) {
  switch (type) {
#define C2_IS_ELEMENT_TYPE(ID, T, NAME, NUMPY) case DataType::ID:
    C2_FOR_EACH_DATA_TYPE(C2_IS_ELEMENT_TYPE)
#undef C2_IS_ELEMENT_TYPE
    case DataType::BYTE:
      return true;
    default:
      return false;
  }
}

std::string DataTypeName(DataType type) {
  switch (type) {
#define C2_DATA_TYPE_NAME(ID, T, NAME, NUMPY) \
  case DataType::ID:                          \
    return #ID;
    C2_FOR_EACH_DATA_TYPE(C2_DATA_TYPE_NAME)
#undef C2_DATA_TYPE_NAME
    case DataType::UNDEFINED:
      return "UNDEFINED";
    case DataType::BYTE:
      return "BYTE";
  }
  return MakeString("DataType(", static_cast<int>(type), ")");
}

const char* NumpyDtypeName(DataType type) {
  switch (type) {
#define C2_NUMPY_NAME(ID, T, NAME, NUMPY) \
  case DataType::ID:                      \
    return NUMPY;
    C2_FOR_EACH_DATA_TYPE(C2_NUMPY_NAME)
#undef C2_NUMPY_NAME
    case DataType::BYTE:
      return "uint8";
    default:
      break;
  }
  ThrowUnsupportedDataType(type);
}

}  // namespace caffe2
