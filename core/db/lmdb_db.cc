// lmdb: the source is a directory holding an LMDB environment (spec §5.10). NEW creates the
// directory (it must not exist), the map size is 1 TiB, READ opens read-only without locking.
// Cursors iterate in byte-wise key order inside one read transaction each. Every commit updates the
// store's seal (core/db/integrity.h). Opening a data file shorter than its own meta pages say (a
// cut copy, which LMDB would map and crash on) is an error.
#include <lmdb.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "core/db/db.h"
#include "core/db/integrity.h"
#include "core/enforce.h"
#include "core/logging.h"

namespace caffe2 {
namespace db {
namespace {

constexpr size_t kMapSize = size_t(1) << 40;

void Check(int rc, const char* what, const std::string& path) {
  C2_ENFORCE(rc == MDB_SUCCESS, "lmdb ", what, " failed for '", path, "': ", mdb_strerror(rc));
}

// The environment, kept alive by the DB and every cursor and transaction.
struct LMDBEnv {
  MDB_env* env = nullptr;
  std::string path;
  ~LMDBEnv() {
    if (env) mdb_env_close(env);
  }
};

// `raw` cursors also show the integrity records (for VerifyIntegrity).
class LMDBCursor final : public Cursor {
 public:
  LMDBCursor(std::shared_ptr<LMDBEnv> env, bool raw) : env_(std::move(env)), raw_(raw) {
    Check(mdb_txn_begin(env_->env, nullptr, MDB_RDONLY, &txn_), "mdb_txn_begin", env_->path);
    MDB_dbi dbi;
    int rc = mdb_dbi_open(txn_, nullptr, 0, &dbi);
    if (rc == MDB_SUCCESS) rc = mdb_cursor_open(txn_, dbi, &cursor_);
    if (rc != MDB_SUCCESS) {
      mdb_txn_abort(txn_);
      Check(rc, "opening a cursor", env_->path);
    }
    SeekToFirst();
  }
  ~LMDBCursor() override {
    mdb_cursor_close(cursor_);
    mdb_txn_abort(txn_);
  }

  bool SupportsSeek() override { return true; }
  void Seek(const std::string& key) override {
    key_.mv_size = key.size();
    key_.mv_data = const_cast<char*>(key.data());
    Move(MDB_SET_RANGE);
  }
  void SeekToFirst() override { Move(MDB_FIRST); }
  void Next() override {
    C2_ENFORCE(valid_, "Next() past the end of lmdb '", env_->path, "'");
    Move(MDB_NEXT);
  }
  std::string key() override {
    C2_ENFORCE(valid_, "key() past the end of lmdb '", env_->path, "'");
    return std::string(static_cast<const char*>(key_.mv_data), key_.mv_size);
  }
  std::string value() override {
    C2_ENFORCE(valid_, "value() past the end of lmdb '", env_->path, "'");
    return std::string(static_cast<const char*>(value_.mv_data), value_.mv_size);
  }
  bool Valid() override { return valid_; }

 private:
  void Move(MDB_cursor_op op) {
    int rc = mdb_cursor_get(cursor_, &key_, &value_, op);
    while (rc == MDB_SUCCESS && !raw_ &&
           IsKeyedIntegrityKey(std::string(static_cast<const char*>(key_.mv_data), key_.mv_size))) {
      rc = mdb_cursor_get(cursor_, &key_, &value_, MDB_NEXT);
    }
    valid_ = rc == MDB_SUCCESS;
    if (rc != MDB_NOTFOUND) Check(rc, "mdb_cursor_get", env_->path);
  }

  std::shared_ptr<LMDBEnv> env_;
  bool raw_;
  MDB_txn* txn_ = nullptr;
  MDB_cursor* cursor_ = nullptr;
  MDB_val key_{}, value_{};
  bool valid_ = false;
};

// Keeps the seal of the records it writes: each Put adjusts a running delta (the old record out,
// the new one in), which Commit adds to the stored seal in the same LMDB transaction.
class LMDBTransaction final : public Transaction {
 public:
  explicit LMDBTransaction(std::shared_ptr<LMDBEnv> env) : env_(std::move(env)) { Begin(); }
  ~LMDBTransaction() override {
    if (!txn_) return;
    try {
      Finish();
    } catch (const std::exception& e) {
      C2_LOG(Error) << e.what();
    }
  }

  void Put(const std::string& key, const std::string& value) override {
    C2_ENFORCE(txn_ != nullptr, "lmdb '", env_->path, "': the transaction failed earlier");
    C2_ENFORCE(!IsKeyedIntegrityKey(key), "lmdb '", env_->path, "': the key '", key,
               "' is reserved for the store's integrity records");
    if (!started_) Start();
    if (sealing_) {
      std::string old;
      if (Get(key, &old)) delta_.Remove(key, old);
      delta_.Add(key, value);
    }
    Set(key, value, "put of key '" + key + "' (" + std::to_string(value.size()) + " bytes)");
  }

  void Commit() override {
    C2_ENFORCE(txn_ != nullptr, "lmdb '", env_->path, "': the transaction failed earlier");
    WriteSeal(/*finishing=*/false);
    int rc = mdb_txn_commit(txn_);
    txn_ = nullptr;
    Check(rc, "mdb_txn_commit", env_->path);
    Begin();
  }

 private:
  void Begin() {
    MDB_txn* txn = nullptr;
    Check(mdb_txn_begin(env_->env, nullptr, 0, &txn), "mdb_txn_begin", env_->path);
    int rc = mdb_dbi_open(txn, nullptr, 0, &dbi_);
    if (rc != MDB_SUCCESS) mdb_txn_abort(txn);
    Check(rc, "mdb_dbi_open", env_->path);
    txn_ = txn;
  }

  bool Get(const std::string& key, std::string* value) {
    MDB_val k{key.size(), const_cast<char*>(key.data())};
    MDB_val v{};
    const int rc = mdb_get(txn_, dbi_, &k, &v);
    if (rc == MDB_NOTFOUND) return false;
    Check(rc, "mdb_get", env_->path);
    value->assign(static_cast<const char*>(v.mv_data), v.mv_size);
    return true;
  }

  void Set(const std::string& key, const std::string& value, const std::string& what) {
    MDB_val k{key.size(), const_cast<char*>(key.data())};
    MDB_val v{value.size(), const_cast<char*>(value.data())};
    const int rc = mdb_put(txn_, dbi_, &k, &v, 0);
    C2_ENFORCE(rc == MDB_SUCCESS, "lmdb ", what, " into '", env_->path,
               "' failed: ", mdb_strerror(rc));
  }

  // The first Put: a store with a seal, or an empty one, is sealed; one upstream wrote is not.
  void Start() {
    started_ = true;
    std::string seal;
    if (Get(kKeyedSealKey, &seal)) {
      KeyedSeal stored;
      C2_ENFORCE(ParseKeyedSeal(seal, &stored), "lmdb '", env_->path,
                 "' is corrupt: its integrity record ", "cannot be read");
      sealing_ = true;
    } else {
      MDB_stat stat;
      Check(mdb_stat(txn_, dbi_, &stat), "mdb_stat", env_->path);
      sealing_ = stat.ms_entries == 0;
    }
    if (sealing_) Set(kKeyedWritingKey, KeyedWritingValue(), "marking");
  }

  // The stored seal plus the changes since the last commit; the last commit writes it even
  // unchanged.
  void WriteSeal(bool finishing) {
    if (!sealing_ || (delta_.count == 0 && delta_.sum == 0 && !finishing)) return;
    KeyedSeal seal;
    std::string stored;
    if (Get(kKeyedSealKey, &stored)) ParseKeyedSeal(stored, &seal);
    seal.Merge(delta_);
    Set(kKeyedSealKey, KeyedSealValue(seal), "sealing");
    delta_ = KeyedSeal();
  }

  // The last commit, which also removes the writing mark.
  void Finish() {
    if (sealing_) {
      WriteSeal(/*finishing=*/true);
      MDB_val k{sizeof(kKeyedWritingKey) - 1, const_cast<char*>(kKeyedWritingKey)};
      const int rc = mdb_del(txn_, dbi_, &k, nullptr);
      if (rc != MDB_NOTFOUND) Check(rc, "mdb_del", env_->path);
    }
    const int rc = mdb_txn_commit(txn_);
    txn_ = nullptr;
    Check(rc, "mdb_txn_commit", env_->path);
  }

  std::shared_ptr<LMDBEnv> env_;
  MDB_txn* txn_ = nullptr;
  MDB_dbi dbi_ = 0;
  bool started_ = false, sealing_ = false;
  KeyedSeal delta_;  // what the puts since the last commit changed
};

// The data file must hold every page the meta page counts; a shorter one was cut.
void CheckFileSize(const LMDBEnv& env) {
  MDB_envinfo info;
  MDB_stat stat;
  Check(mdb_env_info(env.env, &info), "mdb_env_info", env.path);
  Check(mdb_env_stat(env.env, &stat), "mdb_env_stat", env.path);
  const std::string file = env.path + "/data.mdb";
  struct stat st;
  if (::stat(file.c_str(), &st) != 0) return;
  const uint64_t needed = (static_cast<uint64_t>(info.me_last_pgno) + 1) * stat.ms_psize;
  C2_ENFORCE(static_cast<uint64_t>(st.st_size) >= needed, "lmdb '", env.path,
             "' is truncated: ", file, " has ", st.st_size, " bytes but its pages need ", needed);
}

class LMDB final : public DB {
 public:
  LMDB(const std::string& source, Mode mode) : DB(source, mode) {
    if (mode == NEW) {
      C2_ENFORCE(mkdir(source.c_str(), 0744) == 0, "cannot create the lmdb directory '", source,
                 "': ", std::strerror(errno),
                 errno == EEXIST ? " (Save creates a new lmdb; remove the old one first)" : "");
    }
    auto env = std::make_shared<LMDBEnv>();
    env->path = source;
    Check(mdb_env_create(&env->env), "mdb_env_create", source);
    Check(mdb_env_set_mapsize(env->env, kMapSize), "mdb_env_set_mapsize", source);
    unsigned flags = MDB_NOTLS;
    if (mode == READ) flags |= MDB_RDONLY | MDB_NOLOCK;
    Check(mdb_env_open(env->env, source.c_str(), flags, 0664), "mdb_env_open", source);
    CheckFileSize(*env);
    env_ = std::move(env);
  }

  void Close() override { env_.reset(); }

  std::unique_ptr<Cursor> NewCursor() override {
    C2_ENFORCE(env_ != nullptr, "lmdb '", source_, "' is closed");
    return std::make_unique<LMDBCursor>(env_, /*raw=*/false);
  }
  void VerifyIntegrity() override {
    C2_ENFORCE(env_ != nullptr, "lmdb '", source_, "' is closed");
    LMDBCursor raw(env_, /*raw=*/true);
    VerifyKeyedStore(&raw, "lmdb '" + source_ + "'");
  }
  std::unique_ptr<Transaction> NewTransaction() override {
    C2_ENFORCE(env_ != nullptr, "lmdb '", source_, "' is closed");
    C2_ENFORCE(mode_ != READ, "lmdb '", source_, "' opened in READ mode cannot be written");
    return std::make_unique<LMDBTransaction>(env_);
  }

 private:
  std::shared_ptr<LMDBEnv> env_;
};

std::unique_ptr<DB> CreateLMDB(const std::string& source, Mode mode) {
  return std::make_unique<LMDB>(source, mode);
}

const bool registered_lmdb [[maybe_unused]] =
    RegisterDB("lmdb", CreateLMDB) && RegisterDB("LMDB", CreateLMDB);

}  // namespace
}  // namespace db
}  // namespace caffe2
