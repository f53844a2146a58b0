#include "core/db/integrity.h"

#include <zlib.h>

#include <algorithm>
#include <initializer_list>

#include "caffe2/proto/caffe2.pb.h"
#include "core/db/db.h"
#include "core/enforce.h"

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

// The values of an Int64Blob named `name` with `n` values; false for anything else.
bool ParseInt64Blob(const std::string& value, const char* name, int n, int64_t* out) {
  BlobProto blob;
  if (!blob.ParseFromString(value) || blob.name() != name || blob.tensor().int64_data_size() != n)
    return false;
  for (int i = 0; i < n; ++i) out[i] = blob.tensor().int64_data(i);
  return true;
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

uint32_t RecordCrc(const std::string& key, const std::string& value, uint32_t crc) {
  const int32_t lens[2] = {static_cast<int32_t>(key.size()), static_cast<int32_t>(value.size())};
  crc = Crc(crc, lens, sizeof(lens));
  crc = Crc(crc, key.data(), key.size());
  return Crc(crc, value.data(), value.size());
}

// ---- minidb ----

bool IsMiniDBIntegrityKey(const std::string& key) {
  return key == kMiniDBHeaderKey || key == kMiniDBTrailerKey;
}

void MiniDBChecksum::Add(const std::string& key, const std::string& value) {
  crc = RecordCrc(key, value, crc);
  ++count;
}

std::string MiniDBHeaderValue() { return Int64Blob(kMiniDBHeaderKey, {1}); }

std::string MiniDBTrailerValue(const MiniDBChecksum& sum) {
  return Int64Blob(kMiniDBTrailerKey, {sum.count, static_cast<int64_t>(sum.crc)});
}

bool ParseMiniDBTrailer(const std::string& value, MiniDBChecksum* sum) {
  int64_t values[2];
  if (!ParseInt64Blob(value, kMiniDBTrailerKey, 2, values)) return false;
  sum->count = values[0];
  sum->crc = static_cast<uint32_t>(values[1]);
  return true;
}

// ---- keyed stores ----

bool IsKeyedIntegrityKey(const std::string& key) {
  return key == kKeyedSealKey || key == kKeyedWritingKey;
}

void KeyedSeal::Add(const std::string& key, const std::string& value) {
  sum += RecordCrc(key, value);
  ++count;
}

void KeyedSeal::Remove(const std::string& key, const std::string& value) {
  sum -= RecordCrc(key, value);
  --count;
}

void KeyedSeal::Merge(const KeyedSeal& delta) {
  sum += delta.sum;
  count += delta.count;
}

std::string KeyedSealValue(const KeyedSeal& seal) {
  return Int64Blob(kKeyedSealKey, {seal.count, static_cast<int64_t>(seal.sum)});
}

std::string KeyedWritingValue() { return Int64Blob(kKeyedWritingKey, {1}); }

bool ParseKeyedSeal(const std::string& value, KeyedSeal* seal) {
  int64_t values[2];
  if (!ParseInt64Blob(value, kKeyedSealKey, 2, values)) return false;
  seal->count = values[0];
  seal->sum = static_cast<uint64_t>(values[1]);
  return true;
}

void VerifyKeyedStore(Cursor* raw, const std::string& db_name) {
  KeyedSeal read;
  bool sealed = false, writing = false;
  KeyedSeal stored;
  for (raw->SeekToFirst(); raw->Valid(); raw->Next()) {
    const std::string key = raw->key();
    if (key == kKeyedSealKey) {
      C2_ENFORCE(ParseKeyedSeal(raw->value(), &stored), db_name,
                 " is corrupt: its integrity record cannot be read");
      sealed = true;
    } else if (key == kKeyedWritingKey) {
      writing = true;
    } else {
      read.Add(key, raw->value());
    }
  }
  if (!sealed) return;
  C2_ENFORCE(!writing, db_name,
             " is incomplete: a writer never finished it (killed mid-save?); it holds ", read.count,
             " records");
  C2_ENFORCE(read == stored, db_name, " is corrupt: its ", read.count,
             " records do not match their integrity record (written: ", stored.count,
             " records, checksum ", stored.sum, "; read: ", read.count, " records, checksum ",
             read.sum, ")");
}

}  // namespace db
}  // namespace caffe2
