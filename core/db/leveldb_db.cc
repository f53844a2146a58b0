// leveldb: the source is a LevelDB directory (spec §5.10). READ requires it to exist, WRITE creates
// it when missing, NEW requires that it does not exist. Cursors iterate in byte-wise key order;
// transactions buffer a WriteBatch that Commit writes.
#include <leveldb/db.h>
#include <leveldb/write_batch.h>

#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>

#include "core/db/db.h"
#include "core/enforce.h"
#include "core/logging.h"

namespace caffe2 {
namespace db {
namespace {

// The database handle, kept alive by the DB and every cursor and transaction.
struct LevelDBHandle {
  std::unique_ptr<leveldb::DB> db;
  std::string path;
};

class LevelDBCursor final : public Cursor {
 public:
  explicit LevelDBCursor(std::shared_ptr<LevelDBHandle> handle) : handle_(std::move(handle)) {
    leveldb::ReadOptions options;
    options.fill_cache = false;
    iter_.reset(handle_->db->NewIterator(options));
    SeekToFirst();
  }

  bool SupportsSeek() override { return true; }
  void Seek(const std::string& key) override {
    iter_->Seek(key);
    CheckStatus();
  }
  void SeekToFirst() override {
    iter_->SeekToFirst();
    CheckStatus();
  }
  void Next() override {
    C2_ENFORCE(iter_->Valid(), "Next() past the end of leveldb '", handle_->path, "'");
    iter_->Next();
    CheckStatus();
  }
  std::string key() override {
    C2_ENFORCE(iter_->Valid(), "key() past the end of leveldb '", handle_->path, "'");
    return iter_->key().ToString();
  }
  std::string value() override {
    C2_ENFORCE(iter_->Valid(), "value() past the end of leveldb '", handle_->path, "'");
    return iter_->value().ToString();
  }
  bool Valid() override { return iter_->Valid(); }

 private:
  void CheckStatus() {
    leveldb::Status s = iter_->status();
    C2_ENFORCE(s.ok(), "reading leveldb '", handle_->path, "' failed: ", s.ToString());
  }

  // Declared first so that the iterator is destroyed before the database.
  std::shared_ptr<LevelDBHandle> handle_;
  std::unique_ptr<leveldb::Iterator> iter_;
};

class LevelDBTransaction final : public Transaction {
 public:
  explicit LevelDBTransaction(std::shared_ptr<LevelDBHandle> handle) : handle_(std::move(handle)) {}
  ~LevelDBTransaction() override {
    try {
      Commit();
    } catch (const std::exception& e) {
      C2_LOG(Error) << e.what();
    }
  }

  void Put(const std::string& key, const std::string& value) override {
    batch_.Put(key, value);
    ++pending_;
  }

  void Commit() override {
    if (pending_ == 0) return;
    leveldb::Status s = handle_->db->Write(leveldb::WriteOptions(), &batch_);
    batch_.Clear();
    pending_ = 0;
    C2_ENFORCE(s.ok(), "writing to leveldb '", handle_->path, "' failed: ", s.ToString());
  }

 private:
  std::shared_ptr<LevelDBHandle> handle_;
  leveldb::WriteBatch batch_;
  size_t pending_ = 0;
};

// LevelDB allows one open handle per directory and process, so handles opened for READ or WRITE
// are shared: several readers (and DBExists) can use a DB that is already open.
struct OpenHandles {
  std::mutex mutex;
  std::map<std::string, std::weak_ptr<LevelDBHandle>> handles;
};

OpenHandles& GetOpenHandles() {
  static auto* open = new OpenHandles();
  return *open;
}

std::string CanonicalPath(const std::string& path) {
  std::error_code ec;
  auto canonical = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : canonical.string();
}

class LevelDB final : public DB {
 public:
  LevelDB(const std::string& source, Mode mode) : DB(source, mode) {
    auto& open = GetOpenHandles();
    std::lock_guard<std::mutex> lock(open.mutex);
    const std::string canonical = CanonicalPath(source);
    for (auto it = open.handles.begin(); it != open.handles.end();) {
      it = it->second.expired() ? open.handles.erase(it) : std::next(it);
    }
    if (mode != NEW) {
      auto it = open.handles.find(canonical);
      if (it != open.handles.end()) handle_ = it->second.lock();
      if (handle_) return;
    }
    leveldb::Options options;
    options.block_size = 65536;
    options.write_buffer_size = 256 << 20;
    options.max_open_files = 100;
    options.error_if_exists = mode == NEW;
    options.create_if_missing = mode != READ;
    leveldb::DB* db = nullptr;
    leveldb::Status s = leveldb::DB::Open(options, source, &db);
    C2_ENFORCE(s.ok(), "leveldb cannot open '", source, "': ", s.ToString());
    handle_ = std::make_shared<LevelDBHandle>();
    handle_->db.reset(db);
    handle_->path = source;
    open.handles[canonical] = handle_;
  }

  void Close() override { handle_.reset(); }

  std::unique_ptr<Cursor> NewCursor() override {
    C2_ENFORCE(handle_ != nullptr, "leveldb '", source_, "' is closed");
    return std::make_unique<LevelDBCursor>(handle_);
  }
  std::unique_ptr<Transaction> NewTransaction() override {
    C2_ENFORCE(handle_ != nullptr, "leveldb '", source_, "' is closed");
    C2_ENFORCE(mode_ != READ, "leveldb '", source_, "' opened in READ mode cannot be written");
    return std::make_unique<LevelDBTransaction>(handle_);
  }

 private:
  std::shared_ptr<LevelDBHandle> handle_;
};

std::unique_ptr<DB> CreateLevelDB(const std::string& source, Mode mode) {
  return std::make_unique<LevelDB>(source, mode);
}

const bool registered_leveldb [[maybe_unused]] =
    RegisterDB("leveldb", CreateLevelDB) && RegisterDB("LevelDB", CreateLevelDB);

}  // namespace
}  // namespace db
}  // namespace caffe2
