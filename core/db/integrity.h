// The integrity records of the DB files this runtime writes (beyond upstream, whose DBs have no
// check: a flipped bit loaded silently different values, a cut file loaded a subset). One scheme
// for every backend: CRC-32s of each record's lengths, key and value, and a record count, kept in
// extra records whose values are valid BlobProtos (INT64 tensors), so upstream readers still load
// the DBs (with the extra blobs under these keys). Cursors never show the integrity records, and
// Put refuses their keys.
//
// minidb (an append-only file, read in order):
//   A file written here starts with a header record, and each writing session (a NEW or WRITE open,
//   up to its Close) ends with a trailer holding the number of data records of the session and the
//   CRC-32 of their bytes. A reader verifies a file that starts with the header before handing out
//   any record: a changed byte, a file cut at a record boundary or a session without its trailer (a
//   writer killed mid-save) is an error naming the file and the byte offset. Files without the
//   header (written by upstream) are read as before.
//
// lmdb and leveldb (keyed stores, read in key order):
//   Every commit also writes the seal: the number of data records and the sum (mod 2^64) of their
//   records' CRC-32s, which does not depend on the order of the writes. A transaction that has
//   written marks the store as being written until it is destroyed (its final commit removes the
//   mark). DB::VerifyIntegrity (Load calls it) rescans the store: a changed record, a removed or
//   added one, or a mark left by a writer killed mid-save is an error naming the store. A store
//   without a seal (written by upstream) is not checked, and a store upstream wrote is not sealed
//   when written here. Readers of training data (DBReader) do not rescan.
#pragma once

#include <cstdint>
#include <string>

namespace caffe2 {
namespace db {

class Cursor;

// CRC-32 (zlib's) of one record: its two lengths (int32, as minidb stores them), key and value.
uint32_t RecordCrc(const std::string& key, const std::string& value, uint32_t crc = 0);

// ---- minidb ----
constexpr const char kMiniDBHeaderKey[] = "__caffe2_minidb_header__";
constexpr const char kMiniDBTrailerKey[] = "__caffe2_minidb_integrity__";

bool IsMiniDBIntegrityKey(const std::string& key);

// The running count and CRC-32 of the data records of one writing session.
struct MiniDBChecksum {
  int64_t count = 0;
  uint32_t crc = 0;
  void Add(const std::string& key, const std::string& value);
};

std::string MiniDBHeaderValue();
std::string MiniDBTrailerValue(const MiniDBChecksum& sum);
// The checksum a trailer's value holds; false when the value is not a trailer.
bool ParseMiniDBTrailer(const std::string& value, MiniDBChecksum* sum);

// ---- keyed stores ----
constexpr const char kKeyedSealKey[] = "__caffe2_db_integrity__";
constexpr const char kKeyedWritingKey[] = "__caffe2_db_writing__";

bool IsKeyedIntegrityKey(const std::string& key);

// The seal: count and order-independent sum of the data records' CRC-32s.
struct KeyedSeal {
  int64_t count = 0;
  uint64_t sum = 0;
  void Add(const std::string& key, const std::string& value);
  void Remove(const std::string& key, const std::string& value);
  // Adds the changes `delta` recorded (a transaction's puts since its last commit).
  void Merge(const KeyedSeal& delta);
  bool operator==(const KeyedSeal& other) const { return count == other.count && sum == other.sum; }
};

std::string KeyedSealValue(const KeyedSeal& seal);
std::string KeyedWritingValue();
// The seal a value holds; false when the value is not a seal.
bool ParseKeyedSeal(const std::string& value, KeyedSeal* seal);

// Checks a keyed store through `raw`, a cursor that shows the integrity records; `db_name` (like
// "lmdb 'path'") names it in errors. A store without a seal passes.
void VerifyKeyedStore(Cursor* raw, const std::string& db_name);

}  // namespace db
}  // namespace caffe2
