// minidb: one file of records [int32 key_len][int32 value_len][key][value] in native byte order
// (spec §5.10). NEW truncates, WRITE appends, READ reads in file order. Each cursor reads through
// its own file handle; transactions append whole records under the DB's lock and flush on Commit.
// Files written here carry integrity records (integrity.h), verified when a cursor opens.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>

#include "core/db/db.h"
#include "core/db/integrity.h"
#include "core/enforce.h"
#include "core/logging.h"

namespace caffe2 {
namespace db {
namespace {

std::string ErrnoText() { return std::strerror(errno); }

// The write handle, shared by the DB and its transactions.
struct MiniDBFile {
  std::mutex mutex;
  std::FILE* file = nullptr;
  std::string path;
  MiniDBChecksum session;  // the data records written since the open

  ~MiniDBFile() {
    if (file) std::fclose(file);
  }

  // Appends one record (mutex held); data records count in the session's checksum.
  void Append(const std::string& key, const std::string& value) {
    C2_ENFORCE(key.size() <= INT32_MAX && value.size() <= INT32_MAX, "minidb '", path,
               "': record '", key, "' is too large (", value.size(), " value bytes)");
    const int32_t lens[2] = {static_cast<int32_t>(key.size()), static_cast<int32_t>(value.size())};
    C2_ENFORCE(file != nullptr, "minidb '", path, "' is closed");
    bool ok = std::fwrite(lens, sizeof(lens), 1, file) == 1 &&
              std::fwrite(key.data(), key.size(), 1, file) == 1 &&
              std::fwrite(value.data(), value.size(), 1, file) == 1;
    C2_ENFORCE(ok, "cannot write record '", key, "' to minidb '", path, "': ", ErrnoText());
    if (!IsMiniDBIntegrityKey(key)) session.Add(key, value);
  }
};

class MiniDBCursor final : public Cursor {
 public:
  explicit MiniDBCursor(const std::string& path) : path_(path) {
    file_.reset(std::fopen(path.c_str(), "rb"));
    C2_ENFORCE(file_ != nullptr, "cannot open minidb file '", path, "' for reading: ", ErrnoText());
    struct stat st;
    C2_ENFORCE(fstat(fileno(file_.get()), &st) == 0, "cannot stat minidb file '", path,
               "': ", ErrnoText());
    C2_ENFORCE(S_ISREG(st.st_mode), "'", path, "' is ",
               S_ISDIR(st.st_mode) ? "a directory" : "not a regular file", ", not a minidb file");
    file_size_ = static_cast<int64_t>(st.st_size);
    C2_ENFORCE(file_size_ > 0, "minidb file '", path, "' is empty (0 bytes)");
    Verify();
    SeekToFirst();
  }

  void Seek(const std::string& key) override {
    C2_THROW("minidb '", path_, "' does not support Seek (to key '", key,
             "'): iterate from SeekToFirst instead");
  }
  void SeekToFirst() override {
    C2_ENFORCE(std::fseek(file_.get(), 0, SEEK_SET) == 0, "cannot rewind minidb file '", path_,
               "': ", ErrnoText());
    offset_ = 0;
    ReadRecord();
  }
  void Next() override {
    C2_ENFORCE(valid_, "Next() past the end of minidb file '", path_, "'");
    ReadRecord();
  }
  std::string key() override {
    C2_ENFORCE(valid_, "key() past the end of minidb file '", path_, "'");
    return key_;
  }
  std::string value() override {
    C2_ENFORCE(valid_, "value() past the end of minidb file '", path_, "'");
    return value_;
  }
  bool Valid() override { return valid_; }

 private:
  // Reads the next data record (skipping integrity records); at the end the cursor becomes invalid.
  void ReadRecord() {
    while (ReadRawRecord() && IsMiniDBIntegrityKey(key_)) {
    }
  }

  // A file that starts with the integrity header: every session's trailer must match its records.
  void Verify() {
    offset_ = 0;
    if (!ReadRawRecord()) return;
    if (key_ != kMiniDBHeaderKey) {
      // Written by upstream (no check possible), unless integrity records follow a damaged header.
      do {
        C2_ENFORCE(!IsMiniDBIntegrityKey(key_), "minidb file '", path_,
                   "' is corrupt: it holds an integrity ", "record ending at byte offset ", offset_,
                   " but its first record is not the integrity header");
      } while (ReadRawRecord());
      return;
    }
    MiniDBChecksum sum;
    int64_t session_start = offset_;
    bool closed = false;
    while (ReadRawRecord()) {
      if (key_ == kMiniDBTrailerKey) {
        MiniDBChecksum stored;
        C2_ENFORCE(ParseMiniDBTrailer(value_, &stored), "minidb file '", path_,
                   "' is corrupt: its integrity record before byte offset ", offset_,
                   " cannot be read");
        C2_ENFORCE(stored.count == sum.count && stored.crc == sum.crc, "minidb file '", path_,
                   "' is corrupt: the ", sum.count, " records from byte offset ", session_start,
                   " to ", offset_, " do not match their checksum (written: ", stored.count,
                   " records, CRC-32 ", stored.crc, "; read: ", sum.count, " records, CRC-32 ",
                   sum.crc, ")");
        sum = MiniDBChecksum();
        session_start = offset_;
        closed = true;
      } else if (key_ != kMiniDBHeaderKey) {
        sum.Add(key_, value_);
        closed = false;
      }
    }
    C2_ENFORCE(closed, "minidb file '", path_, "' is truncated: the ", sum.count,
               " records from byte offset ", session_start,
               " have no integrity record (the file was cut, or its writer never closed it)");
  }

  // Reads the record at offset_; at a clean end of file returns false (and the cursor is invalid).
  bool ReadRawRecord() {
    valid_ = false;
    const int64_t start = offset_;
    int32_t lens[2];
    size_t got = std::fread(lens, 1, sizeof(lens), file_.get());
    if (got == 0 && std::feof(file_.get())) return false;
    C2_ENFORCE(got == sizeof(lens), "minidb file '", path_, "' is truncated: the record header at ",
               "byte offset ", start, " has ", got, " of ", sizeof(lens), " bytes");
    C2_ENFORCE(lens[0] > 0 && lens[1] > 0, "minidb file '", path_, "' is corrupt: the record at ",
               "byte offset ", start, " has key length ", lens[0], " and value length ", lens[1],
               " (both must be > 0)");
    const int64_t need = static_cast<int64_t>(lens[0]) + lens[1];
    const int64_t left = file_size_ - start - static_cast<int64_t>(sizeof(lens));
    C2_ENFORCE(need <= left, "minidb file '", path_, "' is truncated: the record at byte offset ",
               start, " needs ", need, " bytes of key and value but only ", left, " remain");
    key_.resize(static_cast<size_t>(lens[0]));
    value_.resize(static_cast<size_t>(lens[1]));
    C2_ENFORCE(std::fread(&key_[0], 1, key_.size(), file_.get()) == key_.size() &&
                   std::fread(&value_[0], 1, value_.size(), file_.get()) == value_.size(),
               "cannot read the record at byte offset ", start, " of minidb file '", path_, "'");
    offset_ = start + static_cast<int64_t>(sizeof(lens)) + need;
    valid_ = true;
    return true;
  }

  std::string path_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_{nullptr, &std::fclose};
  int64_t file_size_ = 0;
  int64_t offset_ = 0;
  bool valid_ = false;
  std::string key_, value_;
};

class MiniDBTransaction final : public Transaction {
 public:
  explicit MiniDBTransaction(std::shared_ptr<MiniDBFile> file) : file_(std::move(file)) {}
  ~MiniDBTransaction() override {
    try {
      Commit();
    } catch (const std::exception& e) {
      C2_LOG(Error) << "minidb transaction commit failed: " << e.what();
    }
  }

  void Put(const std::string& key, const std::string& value) override {
    C2_ENFORCE(!key.empty() && !value.empty(), "minidb '", file_->path,
               "' cannot store an empty key or value (key '", key, "', ", value.size(),
               " value bytes)");
    C2_ENFORCE(!IsMiniDBIntegrityKey(key), "minidb '", file_->path, "': the key '", key,
               "' is reserved for the file's integrity records");
    std::lock_guard<std::mutex> lock(file_->mutex);
    file_->Append(key, value);
  }

  void Commit() override {
    std::lock_guard<std::mutex> lock(file_->mutex);
    if (!file_->file) return;
    C2_ENFORCE(std::fflush(file_->file) == 0, "cannot flush minidb '", file_->path,
               "': ", ErrnoText());
  }

 private:
  std::shared_ptr<MiniDBFile> file_;
};

class MiniDB final : public DB {
 public:
  MiniDB(const std::string& source, Mode mode) : DB(source, mode) {
    if (mode == READ) {
      std::FILE* probe = std::fopen(source.c_str(), "rb");
      C2_ENFORCE(probe != nullptr, "cannot open minidb file '", source, "': ", ErrnoText());
      struct stat st;
      const bool regular = fstat(fileno(probe), &st) == 0 && S_ISREG(st.st_mode);
      std::fclose(probe);
      C2_ENFORCE(regular, "'", source, "' is ",
                 S_ISDIR(st.st_mode) ? "a directory" : "not a regular file", ", not a minidb file");
      return;
    }
    writer_ = std::make_shared<MiniDBFile>();
    writer_->path = source;
    writer_->file = std::fopen(source.c_str(), mode == NEW ? "wb" : "ab");
    C2_ENFORCE(writer_->file != nullptr, "cannot open minidb file '", source,
               "' for writing: ", ErrnoText());
    struct stat st;
    if (fstat(fileno(writer_->file), &st) == 0 && st.st_size == 0) {
      std::lock_guard<std::mutex> lock(writer_->mutex);
      writer_->Append(kMiniDBHeaderKey, MiniDBHeaderValue());
    }
  }
  ~MiniDB() override {
    try {
      Close();
    } catch (const std::exception& e) {
      C2_LOG(Error) << e.what();
    }
  }

  void Close() override {
    closed_ = true;
    if (!writer_) return;
    std::lock_guard<std::mutex> lock(writer_->mutex);
    if (!writer_->file) return;
    writer_->Append(kMiniDBTrailerKey, MiniDBTrailerValue(writer_->session));
    int rc = std::fclose(writer_->file);
    writer_->file = nullptr;
    C2_ENFORCE(rc == 0, "cannot close minidb file '", source_, "': ", ErrnoText());
  }

  std::unique_ptr<Cursor> NewCursor() override {
    C2_ENFORCE(mode_ == READ, "minidb '", source_, "' opened in ", ModeName(mode_),
               " mode cannot be read: open it in READ mode");
    C2_ENFORCE(!closed_, "minidb '", source_, "' is closed");
    return std::make_unique<MiniDBCursor>(source_);
  }

  std::unique_ptr<Transaction> NewTransaction() override {
    C2_ENFORCE(mode_ != READ, "minidb '", source_, "' opened in READ mode cannot be written");
    C2_ENFORCE(!closed_, "minidb '", source_, "' is closed");
    return std::make_unique<MiniDBTransaction>(writer_);
  }

 private:
  std::shared_ptr<MiniDBFile> writer_;
  bool closed_ = false;
};

std::unique_ptr<DB> CreateMiniDB(const std::string& source, Mode mode) {
  return std::make_unique<MiniDB>(source, mode);
}

const bool registered_minidb [[maybe_unused]] =
    RegisterDB("minidb", CreateMiniDB) && RegisterDB("MiniDB", CreateMiniDB);

}  // namespace
}  // namespace db
}  // namespace caffe2
