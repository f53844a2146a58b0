#include "core/db/minidb_integrity.h"

#include <zlib.h>

#include <algorithm>

#include "caffe2/proto/caffe2.pb.h"

namespace caffe2 {
namespace db {
namespace {

// A BlobProto holding an INT64 tensor: what upstream's Load sees for an integrity record.
std::string Int64Blob(const char* name, std::initializer_list<int64_t> values) {
  BlobProto blob;
  blob.set_name(name);
  blob.set_type("Tensor");
  TensorProto* t = blob.mutable_tensor();
  t->set_data_type(TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
  return blob.SerializeAsString();
}

uint32_t Crc(uint32_t crc, const void* data, size_t n) {
  const auto* bytes = static_cast<const Bytef*>(data);
  while (n > 0) {  // zlib takes uInt lengths
    const uInt chunk = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    crc = static_cast<uint32_t>(crc32(crc, bytes, chunk));
    bytes += chunk;
    n -= chunk;
  }
  return crc;
}

}  // namespace

bool IsMiniDBIntegrityKey(const std::string& key) { return key == kMiniDBHeaderKey || key == kMiniDBTrailerKey; }

void MiniDBChecksum::Add(const int32_t lens[2], const std::string& key, const std::string& value) {
  crc = Crc(crc, lens, 2 * sizeof(int32_t));
  crc = Crc(crc, key.data(), key.size());
  crc = Crc(crc, value.data(), value.size());
  ++count;
}

std::string MiniDBHeaderValue() { return Int64Blob(kMiniDBHeaderKey, {1}); }

std::string MiniDBTrailerValue(const MiniDBChecksum& sum) {
  return Int64Blob(kMiniDBTrailerKey, {sum.count, static_cast<int64_t>(sum.crc)});
}

bool ParseMiniDBTrailer(const std::string& value, MiniDBChecksum* sum) {
  BlobProto blob;
  if (!blob.ParseFromString(value) || blob.name() != kMiniDBTrailerKey || blob.tensor().int64_data_size() != 2) {
    return false;
  }
  sum->count = blob.tensor().int64_data(0);
  sum->crc = static_cast<uint32_t>(blob.tensor().int64_data(1));
  return true;
}

}  // namespace db
}  // namespace caffe2
