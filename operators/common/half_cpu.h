// float16 on the CPU: ToFloat / FromFloat<T> convert at loads and stores so a kernel templated on
// float or float16 computes in float (identity for float).
#pragma once

#include <type_traits>

#include "core/types.h"

namespace caffe2 {

template <class T>
float ToFloat(T v) {
  if constexpr (std::is_same_v<T, float16>) {
    return HalfToFloat(v);
  } else {
    return static_cast<float>(v);
  }
}

template <class T>
T FromFloat(float v) {
  if constexpr (std::is_same_v<T, float16>) {
    return FloatToHalf(v);
  } else {
    return static_cast<T>(v);
  }
}

}  // namespace caffe2
