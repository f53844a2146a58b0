// DBReader: the blob type created by the CreateDB op and consumed by the DB input ops and Load
// (spec §5.10, ops spec §2.2).
//
// The reader opens a DB for READ and keeps one cursor on it. With num_shards n and shard_id s, the
// cursor starts at record s; Read() returns the current record and advances n records, wrapping
// around to record s again when it runs off the end, so shard s reads records s, s+n, s+2n, ...
// forever (there is no epoch signal). Read is thread-safe: one reader can feed several ops, which
// then receive disjoint consecutive records.
//
// A reader serializes as BlobProto type "DBReader" whose content is a DBReaderProto (name, source,
// db_type, key of the next record to read). Restoring seeks to that key (Seek when the backend
// supports it, a scan otherwise). Restoring into a blob that already holds a reader of the same
// source and type keeps that reader's sharding; a fresh reader reads unsharded.
//
// Each Read also returns its read index: 0 for the first record this reader delivered, then 1, 2,
// ... (a restore does not change it). Ops that draw random numbers per record (ImageInput's
// augmentation) seed them from this index, so a record's treatment depends on its place in the
// stream, not on thread timing, and a resumed run that skips the records it already read (the
// DBReaderSkip op) draws exactly what the uninterrupted run drew.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "caffe2/proto/caffe2.pb.h"
#include "core/db/db.h"

namespace caffe2 {
namespace db {

class DBReader {
 public:
  DBReader() = default;
  // Throws for an unknown db_type, a source that cannot be opened, bad shard arguments, or a DB
  // with fewer than shard_id + 1 records.
  DBReader(const std::string& db_type, const std::string& source, int num_shards = 1,
           int shard_id = 0);
  explicit DBReader(const DBReaderProto& proto);
  DBReader(const DBReader&) = delete;
  DBReader& operator=(const DBReader&) = delete;

  void Open(const std::string& db_type, const std::string& source, int num_shards = 1,
            int shard_id = 0);
  bool is_open() const { return cursor_ != nullptr; }

  // The record under the cursor; then advances num_shards records (wrapping around). Returns the
  // read index (see above).
  int64_t Read(std::string* key, std::string* value) const;
  // Back to this shard's first record.
  void SeekToFirst() const;
  // Positions the cursor at `key` (the first key >= it on seekable backends); throws when absent.
  void SeekToKey(const std::string& key) const;
  // The reader's position; `key` is unset when the DB is empty.
  DBReaderProto GetProto(const std::string& name = "") const;

  // The raw cursor, without the lock or the sharding (used by Load, which consumes records itself).
  Cursor* cursor() const;

  const std::string& db_type() const { return db_type_; }
  const std::string& source() const { return source_; }
  int num_shards() const { return num_shards_; }
  int shard_id() const { return shard_id_; }

 private:
  void MoveToBeginning() const;  // with mutex_ held
  void CheckOpen() const;

  std::string db_type_, source_;
  int num_shards_ = 1;
  int shard_id_ = 0;
  std::unique_ptr<DB> db_;
  std::unique_ptr<Cursor> cursor_;
  mutable int64_t reads_ = 0;
  mutable std::mutex mutex_;
};

}  // namespace db
}  // namespace caffe2
