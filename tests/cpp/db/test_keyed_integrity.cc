// The integrity records of the keyed stores, lmdb and leveldb (core/db/integrity.h): a changed,
// removed or added record, or a writer that never finished, makes VerifyIntegrity (and so Load) an
// error naming the store; cursors never show the records; stores upstream wrote load as before;
// an lmdb data file cut short is refused at open instead of crashing.
#include <gtest/gtest.h>
#include <leveldb/db.h>
#include <lmdb.h>

#include <filesystem>
#include <string>

#include "caffe2/proto/caffe2.pb.h"
#include "core/db/db.h"
#include "core/db/integrity.h"
#include "db_test_util.h"

namespace caffe2 {
namespace {

using testing::ErrorOf;
using testing::Records;
using testing::TempDir;

const Records kRecords = {{"b", std::string(24, '\x40')}, {"name", "hello"}, {"w", "\x01\x02\x03"}};

std::string VerifyError(const std::string& type, const std::string& path) {
  return ErrorOf([&] { db::CreateDB(type, path, db::READ)->VerifyIntegrity(); });
}

// Writes or removes one record with the backend's own library, bypassing the seal (as a stray bit
// or a tool from outside would).
void RawEdit(const std::string& type, const std::string& path, const std::string& key,
             const std::string* value) {
  if (type == "leveldb") {
    leveldb::DB* raw = nullptr;
    ASSERT_TRUE(leveldb::DB::Open(leveldb::Options(), path, &raw).ok());
    leveldb::Status s = value ? raw->Put(leveldb::WriteOptions(), key, *value)
                              : raw->Delete(leveldb::WriteOptions(), key);
    EXPECT_TRUE(s.ok());
    delete raw;
    return;
  }
  MDB_env* env = nullptr;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi;
  ASSERT_EQ(mdb_env_create(&env), MDB_SUCCESS);
  ASSERT_EQ(mdb_env_set_mapsize(env, size_t(1) << 30), MDB_SUCCESS);
  ASSERT_EQ(mdb_env_open(env, path.c_str(), 0, 0664), MDB_SUCCESS);
  ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &txn), MDB_SUCCESS);
  ASSERT_EQ(mdb_dbi_open(txn, nullptr, 0, &dbi), MDB_SUCCESS);
  MDB_val k{key.size(), const_cast<char*>(key.data())};
  if (value) {
    MDB_val v{value->size(), const_cast<char*>(value->data())};
    EXPECT_EQ(mdb_put(txn, dbi, &k, &v, 0), MDB_SUCCESS);
  } else {
    EXPECT_EQ(mdb_del(txn, dbi, &k, nullptr), MDB_SUCCESS);
  }
  EXPECT_EQ(mdb_txn_commit(txn), MDB_SUCCESS);
  mdb_env_close(env);
}

class KeyedIntegrity : public ::testing::TestWithParam<std::string> {
 protected:
  std::string type() const { return GetParam(); }
  TempDir dir_;
  const std::string path_ = dir_ / "store";
};

TEST_P(KeyedIntegrity, SealedStoresReadBackExactlyAndVerify) {
  testing::WriteRecords(type(), path_, kRecords);
  EXPECT_EQ(testing::ReadAll(type(), path_), kRecords);  // no integrity record shows
  EXPECT_EQ(VerifyError(type(), path_), "");
  // A second session (WRITE) that overwrites one record and adds one keeps the seal right.
  testing::WriteRecords(type(), path_, {{"name", "world"}, {"z", "9"}}, db::WRITE);
  EXPECT_EQ(VerifyError(type(), path_), "");
  EXPECT_EQ(testing::ReadAll(type(), path_).size(), kRecords.size() + 1);
}

TEST_P(KeyedIntegrity, ChangedRemovedOrAddedRecordsAreErrorsNamingTheStore) {
  const std::string changed = "hellp";
  for (int edit = 0; edit < 3; ++edit) {
    std::filesystem::remove_all(path_);
    testing::WriteRecords(type(), path_, kRecords);
    if (edit == 0) RawEdit(type(), path_, "name", &changed);
    if (edit == 1) RawEdit(type(), path_, "w", nullptr);
    if (edit == 2) RawEdit(type(), path_, "extra", &changed);
    const std::string error = VerifyError(type(), path_);
    EXPECT_NE(error.find(type() + " '" + path_ + "' is corrupt"), std::string::npos) << error;
    EXPECT_NE(error.find("do not match their integrity record"), std::string::npos) << error;
  }
}

TEST_P(KeyedIntegrity, AWriterThatNeverFinishedIsAnError) {
  testing::WriteRecords(type(), path_, kRecords, db::NEW, /*close=*/false);
  const std::string error = VerifyError(type(), path_);
  EXPECT_NE(error.find("is incomplete: a writer never finished it"), std::string::npos) << error;
  EXPECT_NE(error.find(path_), std::string::npos) << error;
}

TEST_P(KeyedIntegrity, StoresUpstreamWroteAreReadAndNotSealed) {
  {
    auto created =
        db::CreateDB(type(), path_, db::NEW);  // an empty store (lmdb needs its directory)
  }
  const std::string value = "upstream";
  RawEdit(type(), path_, "a", &value);
  EXPECT_EQ(VerifyError(type(), path_), "");
  testing::WriteRecords(type(), path_, {{"b", "here"}}, db::WRITE);
  EXPECT_EQ(VerifyError(type(), path_), "");
  EXPECT_EQ(testing::ReadAll(type(), path_), (Records{{"a", "upstream"}, {"b", "here"}}));
  const std::string changed = "changed";
  RawEdit(type(), path_, "a", &changed);
  EXPECT_EQ(VerifyError(type(), path_), "");  // no seal: nothing to check against
}

TEST_P(KeyedIntegrity, IntegrityKeysAreReservedAndValidBlobProtos) {
  auto out = db::CreateDB(type(), path_, db::NEW);
  auto txn = out->NewTransaction();
  const std::string error = ErrorOf([&] { txn->Put(db::kKeyedSealKey, "x"); });
  EXPECT_NE(error.find("reserved"), std::string::npos) << error;
  db::KeyedSeal seal;
  seal.Add("k", "v");
  BlobProto blob;
  ASSERT_TRUE(blob.ParseFromString(db::KeyedSealValue(seal)));
  EXPECT_EQ(blob.name(), db::kKeyedSealKey);
  db::KeyedSeal parsed;
  ASSERT_TRUE(db::ParseKeyedSeal(db::KeyedSealValue(seal), &parsed));
  EXPECT_TRUE(parsed == seal);
  EXPECT_FALSE(db::ParseKeyedSeal(db::KeyedWritingValue(), &parsed));
}

INSTANTIATE_TEST_SUITE_P(Backends, KeyedIntegrity, ::testing::Values("lmdb", "leveldb"));

TEST(LMDBIntegrity, AFlippedByteInAValueIsAnError) {
  TempDir dir;
  const std::string path = dir / "store";
  const std::string value(64, 'Q');
  testing::WriteRecords("lmdb", path, {{"k", value}, {"other", "x"}});
  // Copy-on-write leaves stale copies of a page in the file: flip the byte in every copy.
  std::string bytes = testing::ReadFileBytes(path + "/data.mdb");
  int copies = 0;
  for (size_t at = bytes.find(value); at != std::string::npos;
       at = bytes.find(value, at + 1), ++copies) {
    bytes[at + 10] ^= 0x04;
  }
  ASSERT_GT(copies, 0);
  testing::WriteFileBytes(path + "/data.mdb", bytes);
  EXPECT_NE(VerifyError("lmdb", path).find("is corrupt"), std::string::npos);
}

TEST(LMDBIntegrity, ACutDataFileIsRefusedAtOpen) {
  TempDir dir;
  const std::string path = dir / "store";
  Records many;
  for (int i = 0; i < 200; ++i)
    many.emplace_back("key" + std::to_string(1000 + i), std::string(500, 'v'));
  testing::WriteRecords("lmdb", path, many);
  const std::string bytes = testing::ReadFileBytes(path + "/data.mdb");
  testing::WriteFileBytes(path + "/data.mdb", bytes.substr(0, bytes.size() / 2));
  const std::string error = ErrorOf([&] { db::CreateDB("lmdb", path, db::READ); });
  EXPECT_NE(error.find("lmdb '" + path + "' is truncated"), std::string::npos) << error;
}

TEST(LevelDBIntegrity, AFlippedByteInTheLogIsAnError) {
  TempDir dir;
  const std::string path = dir / "store";
  const std::string value(64, 'Q');
  testing::WriteRecords("leveldb", path, {{"k", value}});
  bool flipped = false;
  for (const auto& entry : std::filesystem::directory_iterator(path)) {
    std::string bytes = testing::ReadFileBytes(entry.path().string());
    for (size_t at = bytes.find(value); at != std::string::npos; at = bytes.find(value, at + 1)) {
      bytes[at + 10] ^= 0x04;
      flipped = true;
    }
    testing::WriteFileBytes(entry.path().string(), bytes);
  }
  ASSERT_TRUE(flipped);
  const std::string error = ErrorOf([&] {
    auto in = db::CreateDB("leveldb", path, db::READ);
    in->VerifyIntegrity();
    testing::ReadAll("leveldb", path);
  });
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_NE(error.find("orrupt"), std::string::npos) << error;
}

}  // namespace
}  // namespace caffe2
