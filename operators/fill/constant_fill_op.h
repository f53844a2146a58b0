// ConstantFill: Y filled with `value` of type `dtype`.
// Without `dtype`, an integer `value` gives INT64, a string value STRING, otherwise FLOAT.
// Supported: FLOAT, DOUBLE, BOOL, INT8, INT16, INT32, INT64, UINT8, UINT16, STRING.
#pragma once

#include <algorithm>
#include "operators/fill/filler_op.h"

namespace caffe2 {

class ConstantFillOp final : public FillerOp {
 public:
  ConstantFillOp(const OperatorDef& def, Workspace* ws) : FillerOp(def, ws) {
    ArgumentHelper args(def);
    const Argument* value = args.Find("value");
    if (HasArgument("dtype")) {
      dtype_ = static_cast<DataType>(GetSingleArgument<int>("dtype", 1));
    } else if (value && value->has_i()) {
      dtype_ = DataType::INT64;
    } else if (value && value->has_s()) {
      dtype_ = DataType::STRING;
    }
    // A float fill accepts an integer value too (Python writes 1 as an int).
    if (value && value->has_i()) {
      float_value_ = static_cast<double>(value->i());
      int_value_ = value->i();
    } else if (value && value->has_f()) {
      float_value_ = value->f();  // only float dtypes take it, so no integer conversion
      C2_ENFORCE(
          dtype_ == DataType::FLOAT || dtype_ == DataType::DOUBLE || dtype_ == DataType::FLOAT16,
          "'value' ", value->f(), " is a float but dtype is ", DataTypeName(dtype_));
    } else if (value && value->has_s()) {
      C2_ENFORCE(dtype_ == DataType::STRING, "'value' is a string but dtype is ",
                 DataTypeName(dtype_));
      string_value_ = value->s();
    }
    TypeMeta::FromDataType(dtype_);  // rejects unknown dtypes at creation
  }

 protected:
  void Fill(Tensor* out) override {
    switch (dtype_) {
      case DataType::FLOAT:
        return FillWith<float>(out, static_cast<float>(float_value_));
      case DataType::DOUBLE:
        return FillWith<double>(out, float_value_);
      case DataType::FLOAT16:
        return FillWith<float16>(out, FloatToHalf(static_cast<float>(float_value_)));
      case DataType::BOOL:
        return FillWith<bool>(out, int_value_ != 0);
      case DataType::INT8:
        return FillWith<int8_t>(out, static_cast<int8_t>(int_value_));
      case DataType::INT16:
        return FillWith<int16_t>(out, static_cast<int16_t>(int_value_));
      case DataType::INT32:
        return FillWith<int32_t>(out, static_cast<int32_t>(int_value_));
      case DataType::INT64:
        return FillWith<int64_t>(out, int_value_);
      case DataType::UINT8:
        return FillWith<uint8_t>(out, static_cast<uint8_t>(int_value_));
      case DataType::UINT16:
        return FillWith<uint16_t>(out, static_cast<uint16_t>(int_value_));
      case DataType::STRING:
        return FillWith<std::string>(out, string_value_);
      default:
        C2_THROW("unsupported dtype ", DataTypeName(dtype_));
    }
  }

 private:
  template <class T>
  void FillWith(Tensor* out, const T& value) {
    T* data = out->mutable_data<T>();
    std::fill(data, data + out->numel(), value);
  }

  DataType dtype_ = DataType::FLOAT;
  double float_value_ = 0.0;
  int64_t int_value_ = 0;
  std::string string_value_;
};

}  // namespace caffe2
