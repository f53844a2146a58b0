// Helpers shared by the DB and serialization tests: a temporary directory removed at the end of
// each test, whole-file reads and writes, and DBs written and read back record by record.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "core/db/db.h"

namespace caffe2 {
namespace testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "c2_db_test_XXXXXX").string();
    char* made = mkdtemp(&tmpl[0]);
    EXPECT_NE(made, nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void WriteFileBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Runs `fn` and returns the message of the exception it throws ("" when it does not throw).
template <class Fn>
std::string ErrorOf(Fn fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

using Records = std::vector<std::pair<std::string, std::string>>;

// Writes `records` through one transaction, then closes the DB. With close = false a child process
// writes and commits them, then exits without destroying the transaction or the DB, as a process
// killed mid-save after its last commit.
inline void WriteRecords(const std::string& type, const std::string& path, const Records& records,
                         db::Mode mode = db::NEW, bool close = true) {
  if (!close) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      try {
        auto out = db::CreateDB(type, path, mode);
        auto txn = out->NewTransaction();
        for (const auto& kv : records) txn->Put(kv.first, kv.second);
        txn->Commit();
        _exit(0);
      } catch (...) {
        _exit(1);
      }
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the writing child failed";
    return;
  }
  auto out = db::CreateDB(type, path, mode);
  ASSERT_NE(out, nullptr);
  auto txn = out->NewTransaction();
  for (const auto& kv : records) txn->Put(kv.first, kv.second);
  txn->Commit();
  txn.reset();
  out->Close();
}

// Every record a cursor shows, in its order.
inline Records ReadAll(const std::string& type, const std::string& path) {
  auto in = db::CreateDB(type, path, db::READ);
  Records records;
  for (auto cursor = in->NewCursor(); cursor->Valid(); cursor->Next()) {
    records.emplace_back(cursor->key(), cursor->value());
  }
  return records;
}

}  // namespace testing
}  // namespace caffe2
