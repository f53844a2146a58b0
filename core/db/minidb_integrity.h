// The integrity records of the minidb files this runtime writes (beyond upstream, whose minidb has no
// check: a flipped bit loaded silently different values, a cut file loaded a subset).
//
// A file written here starts with a header record, and each writing session (a NEW or WRITE open,
// up to its Close) ends with a trailer record holding the number of data records of the session and
// the CRC-32 of their bytes (both lengths, key and value). Both are ordinary records whose values are
// valid BlobProtos, so upstream readers still load the file (with two extra blobs under these keys).
// A reader here verifies a file that starts with the header before handing out any record: a
// changed byte, a file cut at a record boundary or a session without its trailer (a writer killed
// mid-save) is an error naming the file and the byte offset. Files without the header (written by
// upstream) are read as before. Cursors never show the integrity records.
#pragma once

#include <cstdint>
#include <string>

namespace caffe2 {
namespace db {

constexpr const char kMiniDBHeaderKey[] = "__caffe2_minidb_header__";
constexpr const char kMiniDBTrailerKey[] = "__caffe2_minidb_integrity__";

bool IsMiniDBIntegrityKey(const std::string& key);

// The running count and CRC-32 of the data records of one writing session.
struct MiniDBChecksum {
  int64_t count = 0;
  uint32_t crc = 0;
  void Add(const int32_t lens[2], const std::string& key, const std::string& value);
};

std::string MiniDBHeaderValue();
std::string MiniDBTrailerValue(const MiniDBChecksum& sum);
// The checksum a trailer's value holds; false when the value is not a trailer.
bool ParseMiniDBTrailer(const std::string& value, MiniDBChecksum* sum);

}  // namespace db
}  // namespace caffe2
