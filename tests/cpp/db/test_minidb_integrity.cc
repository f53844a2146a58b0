// The integrity records of minidb files (core/db/integrity.h): every single-bit flip of a file
// written here, a cut at any record boundary and a writer that never closed are errors naming the
// file; the records stay valid BlobProtos for upstream readers; cursors never show them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "caffe2/proto/caffe2.pb.h"
#include "core/db/db.h"
#include "core/enforce.h"
#include "core/db/integrity.h"
#include "db_test_util.h"

namespace caffe2 {
namespace {

using db::CreateDB;
using testing::ErrorOf;
using testing::Records;
using testing::TempDir;

void Write(const std::string& path, const Records& records, db::Mode mode = db::NEW,
           bool close = true) {
  testing::WriteRecords("minidb", path, records, mode, close);
}

Records Read(const std::string& path) { return testing::ReadAll("minidb", path); }

const Records kRecords = {{"w", std::string(24, '\x40')}, {"name", "hello"}, {"b", "\x01\x02\x03"}};

TEST(MiniDBIntegrity, EveryBitFlipIsDetected) {
  TempDir dir;
  const std::string path = dir / "m";
  Write(path, kRecords);
  const std::string bytes = testing::ReadFileBytes(path);
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; bit += 3) {
      std::string flipped = bytes;
      flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
      testing::WriteFileBytes(path, flipped);
      std::string err;
      Records read;
      try {
        read = Read(path);
      } catch (const EnforceNotMet& e) {
        err = e.what();
      }
      // A flip in the header may turn the file into one that looks upstream-written (no check);
      // then what is read must still be exactly what was written.
      if (err.empty()) {
        EXPECT_EQ(read, kRecords) << "byte " << i << " bit " << bit << " changed the data silently";
      } else {
        EXPECT_NE(err.find(path), std::string::npos) << err;
      }
    }
  }
}

TEST(MiniDBIntegrity, CutsAndUnclosedWritersAreErrors) {
  TempDir dir;
  const std::string path = dir / "m";
  Write(path, kRecords);
  const std::string bytes = testing::ReadFileBytes(path);
  // Every prefix of the file (every cut, at record boundaries included) but the whole file.
  for (size_t n = 0; n < bytes.size(); ++n) {
    testing::WriteFileBytes(path, bytes.substr(0, n));
    const std::string err = ErrorOf([&] { Read(path); });
    EXPECT_FALSE(err.empty()) << "a file cut to " << n << " of " << bytes.size()
                              << " bytes read without error";
  }
  testing::WriteFileBytes(path, bytes);
  EXPECT_EQ(Read(path), kRecords);

  Write(path, kRecords, db::NEW, /*close=*/false);
  const std::string err = ErrorOf([&] { Read(path); });
  EXPECT_NE(err.find("never closed"), std::string::npos) << err;
}

TEST(MiniDBIntegrity, AppendingSessionsAreCheckedEach) {
  TempDir dir;
  const std::string path = dir / "m";
  Write(path, {{"a", "1"}});
  Write(path, {{"b", "2"}}, db::WRITE);
  EXPECT_EQ(Read(path), (Records{{"a", "1"}, {"b", "2"}}));
  Write(path, {{"c", "3"}}, db::WRITE, /*close=*/false);
  EXPECT_NE(ErrorOf([&] { Read(path); }).find("truncated"), std::string::npos);
}

TEST(MiniDBIntegrity, RecordsAreBlobProtosForUpstreamReaders) {
  db::MiniDBChecksum sum;
  sum.count = 3;
  sum.crc = 0xdeadbeef;
  BlobProto blob;
  ASSERT_TRUE(blob.ParseFromString(db::MiniDBTrailerValue(sum)));
  EXPECT_EQ(blob.name(), db::kMiniDBTrailerKey);
  EXPECT_EQ(blob.type(), "Tensor");
  ASSERT_EQ(blob.tensor().int64_data_size(), 2);
  ASSERT_TRUE(blob.ParseFromString(db::MiniDBHeaderValue()));
  EXPECT_EQ(blob.name(), db::kMiniDBHeaderKey);
  db::MiniDBChecksum parsed;
  ASSERT_TRUE(db::ParseMiniDBTrailer(db::MiniDBTrailerValue(sum), &parsed));
  EXPECT_EQ(parsed.count, 3);
  EXPECT_EQ(parsed.crc, 0xdeadbeefu);
  EXPECT_FALSE(db::ParseMiniDBTrailer(db::MiniDBHeaderValue(), &parsed));
}

TEST(MiniDBIntegrity, ReservedKeysAndEmptyFiles) {
  TempDir dir;
  const std::string path = dir / "m";
  auto out = CreateDB("minidb", path, db::NEW);
  auto txn = out->NewTransaction();
  EXPECT_NE(ErrorOf([&] { txn->Put(db::kMiniDBTrailerKey, "x"); }).find("reserved"),
            std::string::npos);
  txn.reset();
  out->Close();
  testing::WriteFileBytes(path, "");
  EXPECT_NE(ErrorOf([&] { Read(path); }).find("is empty"), std::string::npos);
}

}  // namespace
}  // namespace caffe2
