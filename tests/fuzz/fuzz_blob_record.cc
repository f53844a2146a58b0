// Fuzz target: one DB record from untrusted bytes, decoded as each reader of this project decodes
// records: a serialized BlobProto restored into a blob (Load), and an image record (ImageInput's
// TensorProtos and caffe Datum forms, with each label type). Each may refuse with a caffe2 error;
// none may crash, leak or read out of bounds.
//
// A tensor record may be one chunk of a large tensor: its dims are the whole tensor's, and
// restoring it allocates the whole tensor, as the format requires. Records claiming more than 2^24
// elements are therefore not restored here (the fuzzer would report the allocation, not a bug).
#include <string>
#include <vector>

#include "caffe2/proto/caffe2.pb.h"
#include "core/blob.h"
#include "core/serialization.h"
#include "core/tensor.h"
#include "operators/io/image_record.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  Refusable([&] {
    caffe2::BlobProto proto;
    if (proto.ParseFromString(bytes) && proto.has_tensor()) {
      const auto& dims = proto.tensor().dims();
      if (caffe2::CheckedNumel(std::vector<int64_t>(dims.begin(), dims.end())) > (int64_t{1} << 24))
        return;
    }
    caffe2::Blob blob;
    caffe2::DeserializeBlob(bytes, &blob);
  });
  for (bool datum : {false, true}) {
    for (int label_type = caffe2::SINGLE_LABEL; label_type <= caffe2::SINGLE_LABEL_WEIGHTED;
         ++label_type) {
      if (datum && label_type != caffe2::SINGLE_LABEL) continue;
      caffe2::ImageRecordFormat format;
      format.use_caffe_datum = datum;
      format.label_type = label_type;
      format.num_labels = 4;
      format.output_sizes = datum ? std::vector<int>{} : std::vector<int>{2};
      Refusable([&] {
        caffe2::ImageRecord record;
        caffe2::ParseImageRecord(bytes, format, "fuzz record", &record);
      });
    }
  }
  return 0;
}
