// leveldb: the source is a LevelDB directory (spec §5.10). READ requires it to exist, WRITE creates
// it when missing, NEW requires that it does not exist. Cursors iterate in byte-wise key order;
// transactions buffer the records that Commit writes as one WriteBatch, with the store's updated
// seal (core/db/integrity.h). LevelDB's own block checksums are verified on every read (paranoid
// checks), so a damaged table or log is an error naming the store.
#include <leveldb/db.h>
#include <leveldb/write_batch.h>

#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>

#include "core/db/db.h"
#include "core/db/integrity.h"
#include "core/enforce.h"
#include "core/logging.h"

namespace caffe2 {
namespace db {
namespace {

// The database handle, kept alive by the DB and every cursor and transaction.
struct LevelDBHandle {
  std::unique_ptr<leveldb::DB> db;
  std::string path;
  std::mutex commit_mutex;  // a commit reads the seal and writes it back

  leveldb::ReadOptions Reading() const {
    leveldb::ReadOptions options;
    options.verify_checksums = true;
    options.fill_cache = false;
    return options;
  }
  bool Get(const std::string& key, std::string* value) const {
    const leveldb::Status s = db->Get(Reading(), key, value);
    if (s.IsNotFound()) return false;
    C2_ENFORCE(s.ok(), "reading key '", key, "' of leveldb '", path, "' failed: ", s.ToString());
    return true;
  }
};

// `raw` cursors also show the integrity records (for VerifyIntegrity).
class LevelDBCursor final : public Cursor {
 public:
  LevelDBCursor(std::shared_ptr<LevelDBHandle> handle, bool raw)
      : handle_(std::move(handle)), raw_(raw) {
    iter_.reset(handle_->db->NewIterator(handle_->Reading()));
    SeekToFirst();
  }

  bool SupportsSeek() override { return true; }
  void Seek(const std::string& key) override {
    iter_->Seek(key);
    Settle();
  }
  void SeekToFirst() override {
    iter_->SeekToFirst();
    Settle();
  }
  void Next() override {
    C2_ENFORCE(iter_->Valid(), "Next() past the end of leveldb '", handle_->path, "'");
    iter_->Next();
    Settle();
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
  // Steps over the integrity records (unless raw) and checks the iterator's status.
  void Settle() {
    while (!raw_ && iter_->Valid() && IsKeyedIntegrityKey(iter_->key().ToString())) iter_->Next();
    leveldb::Status s = iter_->status();
    C2_ENFORCE(s.ok(), "reading leveldb '", handle_->path, "' failed: ", s.ToString());
  }

  // Declared first so that the iterator is destroyed before the database.
  std::shared_ptr<LevelDBHandle> handle_;
  bool raw_;
  std::unique_ptr<leveldb::Iterator> iter_;
};

// Buffers the records put since the last commit; Commit writes them with the seal adjusted by them
// (old records out, new ones in) as one batch.
class LevelDBTransaction final : public Transaction {
 public:
  explicit LevelDBTransaction(std::shared_ptr<LevelDBHandle> handle) : handle_(std::move(handle)) {}
  ~LevelDBTransaction() override {
    try {
      Write(/*finish=*/true);
    } catch (const std::exception& e) {
      C2_LOG(Error) << e.what();
    }
  }

  void Put(const std::string& key, const std::string& value) override {
    C2_ENFORCE(!IsKeyedIntegrityKey(key), "leveldb '", handle_->path, "': the key '", key,
               "' is reserved for the store's integrity records");
    pending_[key] = value;
  }

  void Commit() override { Write(/*finish=*/false); }

 private:
  void Write(bool finish) {
    if (pending_.empty() && !(finish && sealing_)) return;
    std::lock_guard<std::mutex> lock(handle_->commit_mutex);
    leveldb::WriteBatch batch;
    if (!started_) Start(&batch);
    KeyedSeal delta;
    for (const auto& record : pending_) {
      std::string old;
      if (sealing_ && handle_->Get(record.first, &old)) delta.Remove(record.first, old);
      delta.Add(record.first, record.second);
      batch.Put(record.first, record.second);
    }
    if (sealing_) {
      KeyedSeal seal;
      std::string stored;
      if (handle_->Get(kKeyedSealKey, &stored)) ParseKeyedSeal(stored, &seal);
      seal.Merge(delta);
      batch.Put(kKeyedSealKey, KeyedSealValue(seal));
      if (finish) batch.Delete(kKeyedWritingKey);
    }
    pending_.clear();
    if (finish) sealing_ = false;
    leveldb::Status s = handle_->db->Write(leveldb::WriteOptions(), &batch);
    C2_ENFORCE(s.ok(), "writing to leveldb '", handle_->path, "' failed: ", s.ToString());
  }

  // The first commit: a store with a seal, or an empty one, is sealed; one upstream wrote is not.
  void Start(leveldb::WriteBatch* batch) {
    started_ = true;
    std::string stored;
    if (handle_->Get(kKeyedSealKey, &stored)) {
      KeyedSeal seal;
      C2_ENFORCE(ParseKeyedSeal(stored, &seal), "leveldb '", handle_->path,
                 "' is corrupt: its integrity record cannot be read");
      sealing_ = true;
    } else {
      LevelDBCursor cursor(handle_, /*raw=*/false);
      sealing_ = !cursor.Valid();
    }
    if (sealing_) batch->Put(kKeyedWritingKey, KeyedWritingValue());
  }

  std::shared_ptr<LevelDBHandle> handle_;
  std::map<std::string, std::string> pending_;
  bool started_ = false, sealing_ = false;
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
    // leveldb's open creates the directory (with LOCK and LOG files) before it finds that the store
    // is missing; reading a missing store must leave nothing behind.
    C2_ENFORCE(mode != READ || std::filesystem::exists(std::filesystem::path(source) / "CURRENT"),
               "leveldb '", source, "' does not exist (no CURRENT file)");
    leveldb::Options options;
    options.block_size = 65536;
    options.write_buffer_size = 256 << 20;
    options.max_open_files = 100;
    options.error_if_exists = mode == NEW;
    options.create_if_missing = mode != READ;
    options.paranoid_checks = true;
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
    return std::make_unique<LevelDBCursor>(handle_, /*raw=*/false);
  }
  void VerifyIntegrity() override {
    C2_ENFORCE(handle_ != nullptr, "leveldb '", source_, "' is closed");
    LevelDBCursor raw(handle_, /*raw=*/true);
    VerifyKeyedStore(&raw, "leveldb '" + source_ + "'");
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
