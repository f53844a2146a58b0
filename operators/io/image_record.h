// Parsing of ImageInput records (ops spec §2.1, §2.4): a serialized caffe::Datum or TensorProtos
// becomes a decoded 8-bit image in the requested colour mode, a label row, extra-output rows and an
// optional per-record bounding box. Used by ImageInputOp on its decode threads.
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "core/types.h"

namespace caffe2 {

// How labels are stored in a record (argument label_type of ImageInput).
enum ImageLabelType {
  SINGLE_LABEL = 0,                 // one INT32 or FLOAT value
  MULTI_LABEL_SPARSE = 1,           // active indices -> row of num_labels 0/1 values
  MULTI_LABEL_DENSE = 2,            // exactly num_labels values
  MULTI_LABEL_WEIGHTED_SPARSE = 3,  // indices (protos[1]) and float weights (protos[2])
  SINGLE_LABEL_WEIGHTED = 4,        // one value (protos[1]) and its float weight (protos[2])
};

// A row of numbers with the element type of the proto it came from (INT32, INT64 or FLOAT).
struct ValueRow {
  DataType type = DataType::FLOAT;
  std::vector<double> values;
};

struct ImageRecordFormat {
  bool use_caffe_datum = false;
  bool color = true;
  int label_type = SINGLE_LABEL;
  int num_labels = 0;
  std::vector<int> output_sizes;  // length of each extra output row
};

struct ImageRecord {
  cv::Mat image;   // CV_8UC3 (BGR) when color, else CV_8UC1
  ValueRow label;  // 1 value (label types 0, 4) or num_labels values
  std::vector<ValueRow> extras;
  bool has_box = false;
  int box[4] = {0, 0, 0, 0};  // ymin, xmin, height, width
};

// Parses and decodes one record. `where` names the record in errors ("record 'k' of lmdb DB 'p'").
// Throws for a record that is not the expected proto, the wrong number of protos, an undecodable
// image, or labels / extras that do not match the format.
void ParseImageRecord(const std::string& value, const ImageRecordFormat& format,
                      const std::string& where, ImageRecord* record);

}  // namespace caffe2
