#include "operators/io/image_record.h"

#include <string>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "caffe2/proto/caffe2.pb.h"
#include "caffe2/proto/caffe_datum.pb.h"
#include "core/enforce.h"

namespace caffe2 {

namespace {

cv::Mat Decode(const std::string& bytes, bool color, const std::string& where) {
  cv::Mat buffer(1, static_cast<int>(bytes.size()), CV_8UC1, const_cast<char*>(bytes.data()));
  cv::Mat image;
  try {
    if (!bytes.empty())
      image = cv::imdecode(buffer, color ? cv::IMREAD_COLOR : cv::IMREAD_GRAYSCALE);
  } catch (const cv::Exception& e) {
    // e.g. a header that claims an image too large to allocate
    C2_THROW(where, ": the encoded image (", bytes.size(),
             " bytes) could not be decoded by OpenCV: ", e.what());
  }
  C2_ENFORCE(!image.empty(), where, ": the encoded image (", bytes.size(),
             " bytes) could not be decoded by OpenCV");
  return image;
}

// Converts a raw 1- or 3-channel image to the requested colour mode.
cv::Mat ToColorMode(cv::Mat image, bool color) {
  if (color && image.channels() == 1) {
    cv::Mat out;
    cv::cvtColor(image, out, cv::COLOR_GRAY2BGR);
    return out;
  }
  if (!color && image.channels() == 3) {
    cv::Mat out;
    cv::cvtColor(image, out, cv::COLOR_BGR2GRAY);
    return out;
  }
  return image;
}

// The numbers of a proto (INT32, INT64 or FLOAT) as a row.
ValueRow RowOf(const TensorProto& proto, const char* what, const std::string& where) {
  ValueRow row;
  row.type = static_cast<DataType>(proto.data_type());
  switch (row.type) {
    case DataType::INT32:
      row.values.assign(proto.int32_data().begin(), proto.int32_data().end());
      break;
    case DataType::INT64:
      row.values.assign(proto.int64_data().begin(), proto.int64_data().end());
      break;
    case DataType::FLOAT:
      row.values.assign(proto.float_data().begin(), proto.float_data().end());
      break;
    default:
      C2_THROW(where, ": the ", what, " proto has type ", DataTypeName(row.type),
               "; expected INT32, INT64 or FLOAT");
  }
  return row;
}

// An integer single label is a class index: >= 0, and below num_labels when that is given. (A float
// single label is a regression target and may be anything.)
void CheckClassIndex(const ValueRow& label, const ImageRecordFormat& format,
                     const std::string& where) {
  if (label.type != DataType::INT32 || label.values.size() != 1) return;
  const double v = label.values[0];
  C2_ENFORCE(v >= 0 && (format.num_labels <= 0 || v < format.num_labels), where, ": label ", v,
             " is not a class index", format.num_labels > 0 ? " in [0, num_labels = " : " (>= 0)",
             format.num_labels > 0 ? std::to_string(format.num_labels) + ")" : std::string());
}

void ParseDatum(const std::string& value, const ImageRecordFormat& format, const std::string& where,
                ImageRecord* record) {
  caffe::Datum datum;
  C2_ENFORCE(datum.ParseFromString(value), where, " is not a serialized caffe Datum (",
             value.size(), " bytes)");
  record->label.type = DataType::INT32;
  record->label.values.assign(1, datum.label());
  CheckClassIndex(record->label, format, where);
  if (datum.encoded()) {
    record->image = Decode(datum.data(), format.color, where);
    return;
  }
  const int c = datum.channels(), h = datum.height(), w = datum.width();
  C2_ENFORCE(c == 1 || c == 3, where, ": a raw Datum must have 1 or 3 channels, got ", c);
  C2_ENFORCE(h > 0 && w > 0 && datum.data().size() == static_cast<size_t>(c) * h * w, where,
             ": raw Datum of ", c, "x", h, "x", w, " holds ", datum.data().size(),
             " bytes of data");
  cv::Mat image(h, w, c == 3 ? CV_8UC3 : CV_8UC1);
  const auto* src = reinterpret_cast<const uint8_t*>(datum.data().data());
  for (int y = 0; y < h; ++y) {
    uint8_t* dst = image.ptr<uint8_t>(y);
    for (int x = 0; x < w; ++x) {
      for (int k = 0; k < c; ++k) dst[x * c + k] = src[(k * h + y) * w + x];
    }
  }
  record->image = ToColorMode(image, format.color);
}

cv::Mat ImageFromProto(const TensorProto& proto, bool color, const std::string& where) {
  if (proto.data_type() == TensorProto::STRING) {
    C2_ENFORCE(proto.string_data_size() == 1, where, ": the image proto is STRING with ",
               proto.string_data_size(), " strings; expected one encoded image");
    return Decode(proto.string_data(0), color, where);
  }
  C2_ENFORCE(proto.data_type() == TensorProto::BYTE, where, ": the image proto has type ",
             DataTypeName(static_cast<DataType>(proto.data_type())),
             "; expected STRING (encoded) or BYTE (raw HWC pixels)");
  const int nd = proto.dims_size();
  C2_ENFORCE(nd == 2 || nd == 3, where, ": a raw BYTE image needs dims (H, W) or (H, W, C), got ",
             nd, " dims");
  const int64_t h = proto.dims(0), w = proto.dims(1), c = nd == 3 ? proto.dims(2) : 1;
  C2_ENFORCE(h > 0 && w > 0 && (c == 1 || c == 3), where, ": a raw BYTE image of dims (", h, ", ",
             w, ", ", c, ") is not H x W with 1 or 3 channels");
  C2_ENFORCE(proto.byte_data().size() == static_cast<size_t>(h * w * c), where,
             ": a raw BYTE image of dims (", h, ", ", w, ", ", c, ") holds ",
             proto.byte_data().size(), " bytes");
  cv::Mat image(static_cast<int>(h), static_cast<int>(w), c == 3 ? CV_8UC3 : CV_8UC1,
                const_cast<char*>(proto.byte_data().data()));
  return ToColorMode(image.clone(), color);
}

void ParseLabel(const TensorProtos& protos, const ImageRecordFormat& format,
                const std::string& where, ValueRow* label) {
  const ValueRow raw = RowOf(protos.protos(1), "label", where);
  switch (format.label_type) {
    case SINGLE_LABEL:
    case SINGLE_LABEL_WEIGHTED:
      C2_ENFORCE(raw.type != DataType::INT64 && raw.values.size() == 1, where,
                 ": the label proto must hold one INT32 or FLOAT value, got ", raw.values.size(),
                 " ", DataTypeName(raw.type), " values");
      CheckClassIndex(raw, format, where);
      *label = raw;
      return;
    case MULTI_LABEL_DENSE:
      C2_ENFORCE(raw.values.size() == static_cast<size_t>(format.num_labels), where,
                 ": a dense label must hold num_labels = ", format.num_labels, " values, got ",
                 raw.values.size());
      *label = raw;
      return;
    default:
      break;
  }
  // The sparse forms: raw holds active indices.
  C2_ENFORCE(raw.type != DataType::FLOAT, where, ": sparse label indices must be integers");
  std::vector<double> weights(raw.values.size(), 1.0);
  label->type = DataType::INT32;
  if (format.label_type == MULTI_LABEL_WEIGHTED_SPARSE) {
    const ValueRow w = RowOf(protos.protos(2), "label weight", where);
    C2_ENFORCE(w.values.size() == raw.values.size(), where, ": ", raw.values.size(),
               " label indices but ", w.values.size(), " weights");
    weights = w.values;
    label->type = DataType::FLOAT;
  }
  label->values.assign(format.num_labels, 0.0);
  for (size_t i = 0; i < raw.values.size(); ++i) {
    const double index = raw.values[i];
    C2_ENFORCE(index >= 0 && index < format.num_labels, where, ": label index ", index,
               " out of range for num_labels ", format.num_labels);
    label->values[static_cast<size_t>(index)] = weights[i];
  }
}

void ParseTensorProtos(const std::string& value, const ImageRecordFormat& format,
                       const std::string& where, ImageRecord* record) {
  TensorProtos protos;
  C2_ENFORCE(protos.ParseFromString(value), where, " is not a serialized TensorProtos (",
             value.size(), " bytes)");
  const bool weighted = format.label_type == MULTI_LABEL_WEIGHTED_SPARSE ||
                        format.label_type == SINGLE_LABEL_WEIGHTED;
  const int offset = weighted ? 3 : 2;
  const int n_extra = static_cast<int>(format.output_sizes.size());
  const int n = protos.protos_size();
  C2_ENFORCE(n == offset + n_extra || n == offset + n_extra + 1, where, " holds ", n,
             " tensor protos; expected ", offset + n_extra, " (image, label",
             weighted ? ", label weights" : "", n_extra ? ", extra outputs" : "",
             ") or one more for a bounding box");
  record->image = ImageFromProto(protos.protos(0), format.color, where);
  ParseLabel(protos, format, where, &record->label);
  if (format.label_type == SINGLE_LABEL_WEIGHTED) {
    const ValueRow w = RowOf(protos.protos(2), "label weight", where);
    C2_ENFORCE(w.values.size() == 1, where, ": the label weight proto must hold one value, got ",
               w.values.size());
  }
  record->extras.resize(n_extra);
  for (int i = 0; i < n_extra; ++i) {
    record->extras[i] = RowOf(protos.protos(offset + i), "extra output", where);
    C2_ENFORCE(record->extras[i].values.size() == static_cast<size_t>(format.output_sizes[i]),
               where, ": extra output ", i, " holds ", record->extras[i].values.size(),
               " values but output_sizes says ", format.output_sizes[i]);
  }
  record->has_box = n == offset + n_extra + 1;
  if (record->has_box) {
    const TensorProto& box = protos.protos(n - 1);
    C2_ENFORCE(box.data_type() == TensorProto::INT32 && box.int32_data_size() == 4, where,
               ": the bounding box proto must be INT32 x4 [ymin, xmin, height, width]");
    for (int k = 0; k < 4; ++k) record->box[k] = box.int32_data(k);
  }
}

}  // namespace

void ParseImageRecord(const std::string& value, const ImageRecordFormat& format,
                      const std::string& where, ImageRecord* record) {
  record->extras.clear();
  record->has_box = false;
  if (format.use_caffe_datum) {
    ParseDatum(value, format, where, record);
  } else {
    ParseTensorProtos(value, format, where, record);
  }
}

}  // namespace caffe2
