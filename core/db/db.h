// Key/value databases behind Save/Load and the data readers (spec §5.10).
//
// A DB is opened from a source path in one Mode. Cursors iterate the records in the backend's order
// (minidb: file order; lmdb and leveldb: byte-wise key order); transactions write records. Cursors
// and transactions keep the backend alive, so they stay usable after their DB object is destroyed
// (Close() still ends writes for minidb). A transaction commits what it holds when it is destroyed.
//
// Backends registered here: "minidb"/"MiniDB", "lmdb"/"LMDB", "leveldb"/"LevelDB".
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace caffe2 {
namespace db {

enum Mode { READ = 0, WRITE = 1, NEW = 2 };

// "READ", "WRITE" or "NEW".
const char* ModeName(Mode mode);

class Cursor {
 public:
  virtual ~Cursor() = default;
  // Positions at the first key >= `key`. Throws when !SupportsSeek().
  virtual void Seek(const std::string& key) = 0;
  virtual bool SupportsSeek() { return false; }
  virtual void SeekToFirst() = 0;
  virtual void Next() = 0;
  // The current record; only meaningful while Valid().
  virtual std::string key() = 0;
  virtual std::string value() = 0;
  virtual bool Valid() = 0;
};

class Transaction {
 public:
  virtual ~Transaction() = default;
  virtual void Put(const std::string& key, const std::string& value) = 0;
  // Makes the records put so far durable; the transaction stays usable.
  virtual void Commit() = 0;
};

class DB {
 public:
  DB(const std::string& source, Mode mode) : source_(source), mode_(mode) {}
  virtual ~DB() = default;
  DB(const DB&) = delete;
  DB& operator=(const DB&) = delete;

  virtual void Close() = 0;
  // Cursors need READ mode for minidb; transactions need WRITE or NEW.
  virtual std::unique_ptr<Cursor> NewCursor() = 0;
  virtual std::unique_ptr<Transaction> NewTransaction() = 0;
  // Checks the DB against the integrity records this runtime writes with it (core/db/integrity.h)
  // and throws an error naming the DB when they disagree. Load calls it before reading; minidb
  // checks every cursor it opens instead, so its version does nothing.
  virtual void VerifyIntegrity() {}

  const std::string& source() const { return source_; }
  Mode mode() const { return mode_; }

 protected:
  std::string source_;
  Mode mode_;
};

using DBCreator = std::function<std::unique_ptr<DB>(const std::string& source, Mode mode)>;

// Registers (or replaces) a backend; returns true so it can initialise a static.
bool RegisterDB(const std::string& name, DBCreator creator);
std::vector<std::string> RegisteredDBs();
// Null for an unknown type; a source that cannot be opened throws an error naming it and the type.
std::unique_ptr<DB> CreateDB(const std::string& type, const std::string& source, Mode mode);
// Whether `path` opens for READ as `type`. Throws for an unknown type.
bool DBExists(const std::string& type, const std::string& path);

}  // namespace db
}  // namespace caffe2
