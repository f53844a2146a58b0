// Fuzz target: a minidb file from untrusted bytes (written to a temporary file, then opened for
// READ and scanned to the end, as Load does). A damaged file must be refused with an error naming
// it; no input may crash, leak or read out of bounds.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "core/db/db.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/c2_fuzz_minidb_" + std::to_string(getpid());
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  Refusable([&] {
    std::unique_ptr<caffe2::db::DB> db = caffe2::db::CreateDB("minidb", path, caffe2::db::READ);
    std::unique_ptr<caffe2::db::Cursor> cursor = db->NewCursor();
    for (cursor->SeekToFirst(); cursor->Valid(); cursor->Next()) {
      cursor->key();
      cursor->value();
    }
  });
  std::remove(path.c_str());
  return 0;
}
