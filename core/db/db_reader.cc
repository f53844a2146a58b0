#include "core/db/db_reader.h"

#include "core/enforce.h"
#include "core/serialization.h"

namespace caffe2 {
namespace db {

DBReader::DBReader(const std::string& db_type, const std::string& source, int num_shards,
                   int shard_id) {
  Open(db_type, source, num_shards, shard_id);
}

DBReader::DBReader(const DBReaderProto& proto) {
  Open(proto.db_type(), proto.source());
  if (proto.has_key()) SeekToKey(proto.key());
}

void DBReader::Open(const std::string& db_type, const std::string& source, int num_shards,
                    int shard_id) {
  C2_ENFORCE(num_shards >= 1, "DBReader for '", source, "': num_shards must be >= 1, got ",
             num_shards);
  C2_ENFORCE(shard_id >= 0 && shard_id < num_shards, "DBReader for '", source, "': shard_id ",
             shard_id, " out of range for ", num_shards, " shards");
  std::unique_ptr<DB> db = CreateDB(db_type, source, READ);
  if (!db) {
    std::string known;
    for (const std::string& name : RegisteredDBs()) known += (known.empty() ? "" : ", ") + name;
    C2_THROW("DBReader: unknown db_type '", db_type, "' for '", source, "' (registered: ", known,
             ")");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  cursor_.reset();
  db_ = std::move(db);
  cursor_ = db_->NewCursor();
  db_type_ = db_type;
  source_ = source;
  num_shards_ = num_shards;
  shard_id_ = shard_id;
  reads_ = 0;
  MoveToBeginning();
}

void DBReader::CheckOpen() const {
  C2_ENFORCE(cursor_ != nullptr, "DBReader is not open (create it with the CreateDB op)");
}

void DBReader::MoveToBeginning() const {
  cursor_->SeekToFirst();
  for (int s = 0; s < shard_id_; ++s) {
    C2_ENFORCE(cursor_->Valid(), "DBReader: ", db_type_, " DB '", source_, "' has only ", s,
               " records, fewer than needed for shard_id ", shard_id_);
    cursor_->Next();
  }
  C2_ENFORCE(shard_id_ == 0 || cursor_->Valid(), "DBReader: ", db_type_, " DB '", source_,
             "' has only ", shard_id_, " records, fewer than needed for shard_id ", shard_id_);
}

int64_t DBReader::Read(std::string* key, std::string* value) const {
  std::lock_guard<std::mutex> lock(mutex_);
  CheckOpen();
  if (!cursor_->Valid()) MoveToBeginning();  // the cursor was run off the end by Load
  C2_ENFORCE(cursor_->Valid(), "DBReader: ", db_type_, " DB '", source_, "' has no records");
  *key = cursor_->key();
  *value = cursor_->value();
  for (int s = 0; s < num_shards_; ++s) {
    cursor_->Next();
    if (!cursor_->Valid()) {
      MoveToBeginning();
      break;
    }
  }
  return reads_++;
}

void DBReader::SeekToFirst() const {
  std::lock_guard<std::mutex> lock(mutex_);
  CheckOpen();
  MoveToBeginning();
}

void DBReader::SeekToKey(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  CheckOpen();
  if (cursor_->SupportsSeek()) {
    cursor_->Seek(key);
  } else {
    cursor_->SeekToFirst();
    while (cursor_->Valid() && cursor_->key() != key) cursor_->Next();
  }
  C2_ENFORCE(cursor_->Valid(), "DBReader: cannot resume at key '", key, "': ", db_type_, " DB '",
             source_, "' has no such record");
}

DBReaderProto DBReader::GetProto(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  DBReaderProto proto;
  proto.set_name(name);
  proto.set_source(source_);
  proto.set_db_type(db_type_);
  if (cursor_ && cursor_->Valid()) proto.set_key(cursor_->key());
  return proto;
}

Cursor* DBReader::cursor() const {
  CheckOpen();
  return cursor_.get();
}

namespace {

void SerializeReader(const Blob& blob, const std::string& name, const BlobAcceptor& acceptor, int) {
  BlobProto proto;
  proto.set_name(name);
  proto.set_type("DBReader");
  proto.set_content(blob.Get<DBReader>().GetProto(name).SerializeAsString());
  acceptor(name, proto.SerializeAsString());
}

void DeserializeReader(const BlobProto& proto, Blob* blob) {
  DBReaderProto reader_proto;
  C2_ENFORCE(reader_proto.ParseFromString(proto.content()),
             "the content is not a serialized DBReaderProto");
  if (blob->IsType<DBReader>()) {
    const DBReader& existing = blob->Get<DBReader>();
    if (existing.is_open() && existing.source() == reader_proto.source() &&
        existing.db_type() == reader_proto.db_type()) {
      if (reader_proto.has_key()) {
        existing.SeekToKey(reader_proto.key());
      } else {
        existing.SeekToFirst();
      }
      return;
    }
  }
  blob->Reset(new DBReader(reader_proto));
}

const bool registered_reader_serialization [[maybe_unused]] =
    RegisterBlobSerializer(std::type_index(typeid(DBReader)), &SerializeReader) &&
    RegisterBlobDeserializer("DBReader", &DeserializeReader);

}  // namespace
}  // namespace db
}  // namespace caffe2
