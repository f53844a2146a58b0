// GivenTensorFill and its typed variants: Y filled element by element from `values`, whose length
// must equal Y's element count.
//   GivenTensorFill        values: floats; optional dtype FLOAT (default), DOUBLE, BOOL, INT32,
//   INT64 GivenTensorDoubleFill  values: floats, stored as double GivenTensorBoolFill    values:
//   ints, stored as bool GivenTensorIntFill     values: ints, stored as int32 GivenTensorInt64Fill
//   values: ints, stored as int64 GivenTensorStringFill  values: strings
#pragma once

#include <string>
#include <vector>

#include "operators/fill/filler_op.h"

namespace caffe2 {

// Keeps the values as the widest type of their kind and converts on fill; kDefault is the element
// type when no `dtype` argument is given.
template <DataType kDefault>
class GivenTensorFillOp final : public FillerOp {
 public:
  GivenTensorFillOp(const OperatorDef& def, Workspace* ws) : FillerOp(def, ws) {
    dtype_ =
        HasArgument("dtype") ? static_cast<DataType>(GetSingleArgument<int>("dtype", 1)) : kDefault;
    ArgumentHelper args(def);
    const Argument* values = args.Find("values");
    if (values) {
      doubles_.assign(values->floats().begin(), values->floats().end());
      ints_.assign(values->ints().begin(), values->ints().end());
      strings_.assign(values->strings().begin(), values->strings().end());
    }
    count_ = dtype_ == DataType::STRING ? strings_.size()
             : IsIntegral(dtype_)       ? (ints_.empty() ? doubles_.size() : ints_.size())
                                        : doubles_.size();
  }

 protected:
  void Fill(Tensor* out) override {
    C2_ENFORCE(static_cast<int64_t>(count_) == out->numel(), "'values' has ", count_,
               " elements but the output ", Tensor::DimsString(out->dims()), " needs ",
               out->numel());
    switch (dtype_) {
      case DataType::FLOAT:
        return Copy<float>(out);
      case DataType::DOUBLE:
        return Copy<double>(out);
      case DataType::BOOL:
        return Copy<bool>(out);
      case DataType::INT32:
        return Copy<int32_t>(out);
      case DataType::INT64:
        return Copy<int64_t>(out);
      case DataType::INT16:
        return Copy<int16_t>(out);
      case DataType::UINT8:
        return Copy<uint8_t>(out);
      case DataType::STRING: {
        auto* data = out->mutable_data<std::string>();
        for (size_t i = 0; i < strings_.size(); ++i) data[i] = strings_[i];
        return;
      }
      default:
        C2_THROW("unsupported dtype ", DataTypeName(dtype_));
    }
  }

 private:
  static bool IsIntegral(DataType t) {
    return t == DataType::BOOL || t == DataType::INT32 || t == DataType::INT64 ||
           t == DataType::INT16 || t == DataType::UINT8;
  }
  template <class T>
  void Copy(Tensor* out) {
    T* data = out->mutable_data<T>();
    if (!ints_.empty()) {
      for (size_t i = 0; i < ints_.size(); ++i) data[i] = static_cast<T>(ints_[i]);
    } else {
      for (size_t i = 0; i < doubles_.size(); ++i) data[i] = static_cast<T>(doubles_[i]);
    }
  }

  DataType dtype_;
  std::vector<double> doubles_;
  std::vector<int64_t> ints_;
  std::vector<std::string> strings_;
  size_t count_ = 0;
};

}  // namespace caffe2
