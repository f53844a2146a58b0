#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>
#include <vector>

#include "core/db/db.h"
#include "core/db/db_reader.h"
#include "core/db/integrity.h"
#include "core/serialization.h"
#include "db_test_util.h"

namespace caffe2 {
namespace {

using db::CreateDB;
using testing::ErrorOf;
using testing::ReadAll;
using testing::Records;
using testing::TempDir;
using testing::WriteRecords;

// Ten records "k00".."k09" -> "v0".."v9", in key order.
Records TenRecords() {
  Records records;
  for (int i = 0; i < 10; ++i)
    records.emplace_back("k0" + std::to_string(i), "v" + std::to_string(i));
  return records;
}

class AllDBs : public ::testing::TestWithParam<std::string> {};

TEST_P(AllDBs, WriteThenRead) {
  TempDir dir;
  const std::string path = dir / "db";
  Records records = {{"b", "2"}, {"a", std::string("x\0y", 3)}, {"c", std::string(100000, 'z')}};
  WriteRecords(GetParam(), path, records);
  Records expected = records;
  if (GetParam() != "minidb") std::sort(expected.begin(), expected.end());  // key order
  EXPECT_EQ(ReadAll(GetParam(), path), expected);
  EXPECT_TRUE(db::DBExists(GetParam(), path));
  EXPECT_FALSE(db::DBExists(GetParam(), dir / "missing"));

  auto in = CreateDB(GetParam(), path, db::READ);
  auto cursor = in->NewCursor();
  cursor->Next();
  cursor->SeekToFirst();
  EXPECT_EQ(cursor->key(), expected[0].first);
  if (cursor->SupportsSeek()) {
    cursor->Seek("b");
    EXPECT_EQ(cursor->value(), "2");
    cursor->Seek("bb");
    EXPECT_EQ(cursor->key(), "c");
  } else {
    EXPECT_NE(ErrorOf([&] { cursor->Seek("b"); }).find("Seek"), std::string::npos);
  }
}

TEST_P(AllDBs, CursorsOutliveTheirDB) {
  TempDir dir;
  WriteRecords(GetParam(), dir / "db", {{"a", "1"}, {"b", "2"}});
  auto in = CreateDB(GetParam(), dir / "db", db::READ);
  auto cursor = in->NewCursor();
  in.reset();
  cursor->Next();
  EXPECT_EQ(cursor->key(), "b");
}

TEST_P(AllDBs, MissingPathNamesThePathAndType) {
  TempDir dir;
  const std::string path = dir / "nope/deeper";
  std::string err = ErrorOf([&] { CreateDB(GetParam(), path, db::READ); });
  EXPECT_NE(err.find(path), std::string::npos) << err;
  EXPECT_NE(err.find(GetParam()), std::string::npos) << err;
  // Opening a missing DB for reading leaves nothing behind (leveldb's own open would create the
  // directory with a LOCK and a LOG file before failing).
  const std::string missing = dir / "missing";
  EXPECT_NE(ErrorOf([&] { CreateDB(GetParam(), missing, db::READ); }).find(missing),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(missing));
}

INSTANTIATE_TEST_SUITE_P(Backends, AllDBs, ::testing::Values("minidb", "lmdb", "leveldb"));

TEST(DB, RegistryNamesAndUnknownType) {
  auto names = db::RegisteredDBs();
  for (const char* name : {"minidb", "MiniDB", "lmdb", "LMDB", "leveldb", "LevelDB"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
  EXPECT_EQ(CreateDB("nosuchdb", "/tmp/x", db::READ), nullptr);
  EXPECT_NE(ErrorOf([] { db::DBExists("nosuchdb", "/tmp/x"); }).find("nosuchdb"),
            std::string::npos);
}

TEST(DB, NewRefusesExistingLmdbAndLeveldb) {
  TempDir dir;
  for (const char* type : {"lmdb", "leveldb"}) {
    const std::string path = dir / type;
    WriteRecords(type, path, {{"a", "1"}});
    std::string err = ErrorOf([&] { CreateDB(type, path, db::NEW); });
    EXPECT_NE(err.find(path), std::string::npos) << err;
    WriteRecords(type, path, {{"b", "2"}}, db::WRITE);
    EXPECT_EQ(ReadAll(type, path).size(), 2u) << type;
  }
}

// One record's bytes: [int32 key_len][int32 value_len][key][value].
std::string RecordBytes(const std::string& key, const std::string& value) {
  std::string out;
  const int32_t lens[2] = {static_cast<int32_t>(key.size()), static_cast<int32_t>(value.size())};
  out.append(reinterpret_cast<const char*>(lens), sizeof(lens));
  return out + key + value;
}

TEST(MiniDB, ExactByteLayout) {
  TempDir dir;
  WriteRecords("minidb", dir / "m", {{"ab", "xyz"}, {"k", "v"}});
  // The data records as upstream writes them, between the integrity header and the session's
  // trailer (core/db/integrity.h).
  db::MiniDBChecksum sum;
  std::string data;
  for (const auto& kv : Records{{"ab", "xyz"}, {"k", "v"}}) {
    sum.Add(kv.first, kv.second);
    data += RecordBytes(kv.first, kv.second);
  }
  EXPECT_EQ(data.substr(0, 8), std::string("\x02\0\0\0\x03\0\0\0", 8));
  const std::string expected = RecordBytes(db::kMiniDBHeaderKey, db::MiniDBHeaderValue()) + data +
                               RecordBytes(db::kMiniDBTrailerKey, db::MiniDBTrailerValue(sum));
  EXPECT_EQ(testing::ReadFileBytes(dir / "m"), expected);
  EXPECT_EQ(ReadAll("minidb", dir / "m"), (Records{{"ab", "xyz"}, {"k", "v"}}));

  // WRITE appends (a second session with its own trailer), NEW truncates.
  WriteRecords("minidb", dir / "m", {{"z", "9"}}, db::WRITE);
  EXPECT_EQ(ReadAll("minidb", dir / "m").size(), 3u);
  WriteRecords("minidb", dir / "m", {{"z", "9"}}, db::NEW);
  EXPECT_EQ(ReadAll("minidb", dir / "m"), (Records{{"z", "9"}}));
}

TEST(MiniDB, UpstreamFilesWithoutIntegrityRecordsStillLoad) {
  TempDir dir;
  const std::string path = dir / "legacy";
  testing::WriteFileBytes(path, RecordBytes("key", "value") + RecordBytes("key2", "value2"));
  EXPECT_EQ(ReadAll("minidb", path), (Records{{"key", "value"}, {"key2", "value2"}}));
  // Truncated in the middle of a record: named with its offset, as before.
  const std::string bytes = testing::ReadFileBytes(path);
  testing::WriteFileBytes(path, bytes.substr(0, bytes.size() - 1));
  std::string err = ErrorOf([&] { ReadAll("minidb", path); });
  EXPECT_NE(err.find(path), std::string::npos) << err;
  EXPECT_NE(err.find("byte offset 16"), std::string::npos) << err;  // 8 + 3 + 5
  EXPECT_NE(err.find("truncated"), std::string::npos) << err;
  testing::WriteFileBytes(path, bytes.substr(0, 20));  // half of the second header
  err = ErrorOf([&] { ReadAll("minidb", path); });
  EXPECT_NE(err.find("byte offset 16"), std::string::npos) << err;
  std::string corrupt = bytes;
  std::memset(&corrupt[16], 0, 4);  // second key length 0
  testing::WriteFileBytes(path, corrupt);
  err = ErrorOf([&] { ReadAll("minidb", path); });
  EXPECT_NE(err.find("corrupt"), std::string::npos) << err;
  EXPECT_NE(err.find("byte offset 16"), std::string::npos) << err;
}

std::vector<std::string> ReadKeys(const db::DBReader& reader, int n) {
  std::vector<std::string> keys;
  std::string key, value;
  for (int i = 0; i < n; ++i) {
    reader.Read(&key, &value);
    keys.push_back(key);
  }
  return keys;
}

TEST(DBReader, ShardsAreDisjointAndWrapAround) {
  TempDir dir;
  for (const char* type : {"minidb", "leveldb"}) {
    const std::string path = dir / type;
    WriteRecords(type, path, TenRecords());
    db::DBReader shard0(type, path, 3, 0), shard1(type, path, 3, 1), shard2(type, path, 3, 2);
    EXPECT_EQ(ReadKeys(shard0, 5), (std::vector<std::string>{"k00", "k03", "k06", "k09", "k00"}));
    EXPECT_EQ(ReadKeys(shard1, 4), (std::vector<std::string>{"k01", "k04", "k07", "k01"}));
    EXPECT_EQ(ReadKeys(shard2, 4), (std::vector<std::string>{"k02", "k05", "k08", "k02"}));
    std::string err = ErrorOf([&] { db::DBReader(type, path, 20, 10); });
    EXPECT_NE(err.find("shard_id 10"), std::string::npos) << err;
    EXPECT_NE(ErrorOf([&] { db::DBReader(type, path, 2, 2); }), "");
  }
}

TEST(DBReader, ConcurrentReadsSeeEveryRecordOnce) {
  TempDir dir;
  Records records;
  for (int i = 0; i < 200; ++i) records.emplace_back("key" + std::to_string(1000 + i), "v");
  WriteRecords("lmdb", dir / "l", records);
  db::DBReader reader("lmdb", dir / "l");
  std::vector<std::string> a, b;
  std::thread t1([&] { a = ReadKeys(reader, 100); });
  std::thread t2([&] { b = ReadKeys(reader, 100); });
  t1.join();
  t2.join();
  std::set<std::string> seen(a.begin(), a.end());
  seen.insert(b.begin(), b.end());
  EXPECT_EQ(seen.size(), 200u);
}

TEST(DBReader, SerializesItsPositionAndResumes) {
  TempDir dir;
  for (const char* type : {"minidb", "lmdb", "leveldb"}) {
    const std::string path = dir / type;
    WriteRecords(type, path, TenRecords());
    Blob blob;
    blob.Reset(new db::DBReader(type, path));
    ReadKeys(blob.Get<db::DBReader>(), 3);
    std::vector<std::string> keys;
    SerializeBlob(blob, "reader",
                  [&](const std::string& k, const std::string&) { keys.push_back(k); });
    EXPECT_EQ(keys, std::vector<std::string>{"reader"});
    const std::string bytes = SerializeBlob(blob, "reader");
    BlobProto proto;
    ASSERT_TRUE(proto.ParseFromString(bytes));
    EXPECT_EQ(proto.type(), "DBReader");
    DBReaderProto reader_proto;
    ASSERT_TRUE(reader_proto.ParseFromString(proto.content()));
    EXPECT_EQ(reader_proto.name(), "reader");
    EXPECT_EQ(reader_proto.source(), path);
    EXPECT_EQ(reader_proto.db_type(), type);
    EXPECT_EQ(reader_proto.key(), "k03");

    Blob restored;
    DeserializeBlob(bytes, &restored);
    EXPECT_EQ(ReadKeys(restored.Get<db::DBReader>(), 2), (std::vector<std::string>{"k03", "k04"}));
  }
}

TEST(DBReader, RestoringIntoAShardedReaderKeepsTheSharding) {
  TempDir dir;
  WriteRecords("leveldb", dir / "l", TenRecords());
  Blob blob;
  blob.Reset(new db::DBReader("leveldb", dir / "l", 2, 1));
  ReadKeys(blob.Get<db::DBReader>(), 2);  // k01, k03
  const std::string bytes = SerializeBlob(blob, "r");
  ReadKeys(blob.Get<db::DBReader>(), 2);  // k05, k07
  DeserializeBlob(bytes, &blob);
  EXPECT_EQ(ReadKeys(blob.Get<db::DBReader>(), 3), (std::vector<std::string>{"k05", "k07", "k09"}));
  EXPECT_EQ(ReadKeys(blob.Get<db::DBReader>(), 1), std::vector<std::string>{"k01"});
}

TEST(DBReader, MissingKeyOnRestoreIsAnError) {
  TempDir dir;
  WriteRecords("minidb", dir / "m", TenRecords());
  DBReaderProto proto;
  proto.set_source(dir / "m");
  proto.set_db_type("minidb");
  proto.set_key("gone");
  std::string err = ErrorOf([&] { db::DBReader reader(proto); });
  EXPECT_NE(err.find("'gone'"), std::string::npos) << err;
}

}  // namespace
}  // namespace caffe2
