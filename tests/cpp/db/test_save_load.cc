#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "core/allocator.h"
#include "core/argument.h"
#include "core/db/db.h"
#include "core/db/db_reader.h"
#include "core/flags.h"
#include "core/gradient.h"
#include "core/serialization.h"
#include "core/workspace.h"
#include "db_test_util.h"

namespace caffe2 {
namespace {

using testing::ErrorOf;
using testing::TempDir;
using Strings = std::vector<std::string>;

OperatorDef Op(const std::string& type, const Strings& inputs, const Strings& outputs,
               const std::vector<Argument>& args) {
  return CreateOperatorDef(type, "", inputs, outputs, args);
}

Argument Str(const std::string& name, const std::string& value) {
  return MakeArgument(name, value);
}
Argument Int(const std::string& name, int64_t value) { return MakeArgument(name, value); }
Argument List(const std::string& name, const Strings& value) { return MakeArgument(name, value); }

void PutFloats(Workspace* ws, const std::string& name, const std::vector<int64_t>& dims,
               float start) {
  Tensor* t = ws->CreateBlob(name)->GetMutableTensor(Device{});
  t->Resize(dims);
  float* data = t->mutable_data<float>();
  for (int64_t i = 0; i < t->numel(); ++i) data[i] = start + static_cast<float>(i);
}

void ExpectFloats(Workspace* ws, const std::string& name, const std::vector<int64_t>& dims,
                  float start) {
  ASSERT_TRUE(ws->HasBlob(name)) << name;
  const Tensor& t = ws->GetBlob(name)->Get<Tensor>();
  EXPECT_EQ(t.dims(), dims) << name;
  ASSERT_TRUE(t.IsType<float>()) << name;
  for (int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(t.data<float>()[i], start + i) << name;
}

void PutCounter(Workspace* ws, const std::string& name, int64_t value) {
  Tensor* t = ws->CreateBlob(name)->GetMutableTensor(Device{});
  t->Resize(1);
  t->mutable_data<int64_t>()[0] = value;
}

class SaveLoad : public ::testing::TestWithParam<std::string> {};

TEST_P(SaveLoad, RoundTripThroughAWorkspace) {
  TempDir dir;
  Workspace ws(dir.path());
  PutFloats(&ws, "w", {2, 3}, 1.0f);
  PutCounter(&ws, "iter", 7);
  *ws.CreateBlob("s")->GetMutable<std::string>() = "text";
  ws.RunOperatorOnce(
      Op("Save", {"w", "iter", "s"}, {}, {Str("db", "model.db"), Str("db_type", GetParam())}));
  EXPECT_TRUE(std::filesystem::exists(dir / "model.db"));

  Workspace fresh(dir.path());
  fresh.RunOperatorOnce(
      Op("Load", {}, {"s", "w", "iter"}, {Str("db", "model.db"), Str("db_type", GetParam())}));
  ExpectFloats(&fresh, "w", {2, 3}, 1.0f);
  EXPECT_EQ(fresh.GetBlob("iter")->Get<Tensor>().data<int64_t>()[0], 7);
  EXPECT_EQ(fresh.GetBlob("s")->Get<std::string>(), "text");

  Workspace exists(dir.path());
  exists.RunOperatorOnce(
      Op("DBExists", {}, {"yes"}, {Str("db_name", "model.db"), Str("db_type", GetParam())}));
  exists.RunOperatorOnce(
      Op("DBExists", {}, {"no"}, {Str("db_name", "other.db"), Str("db_type", GetParam())}));
  EXPECT_TRUE(exists.GetBlob("yes")->Get<Tensor>().data<bool>()[0]);
  EXPECT_EQ(exists.GetBlob("yes")->Get<Tensor>().ndim(), 0);
  EXPECT_FALSE(exists.GetBlob("no")->Get<Tensor>().data<bool>()[0]);
}

TEST_P(SaveLoad, ChunkedTensorsAndLoadAll) {
  TempDir dir;
  std::string old = FlagValue("caffe2_tensor_chunk_size");
  SetFlag("caffe2_tensor_chunk_size", "4");
  Workspace ws(dir.path());
  PutFloats(&ws, "big", {10}, 0.0f);
  PutFloats(&ws, "empty", {0, 3}, 0.0f);
  ws.RunOperatorOnce(
      Op("Save", {"big", "empty"}, {},
         {Str("db", dir / "abs.db"), Str("db_type", GetParam()), Int("absolute_path", 1)}));
  SetFlag("caffe2_tensor_chunk_size", old);

  auto in = db::CreateDB(GetParam(), dir / "abs.db", db::READ);
  Strings keys;
  for (auto c = in->NewCursor(); c->Valid(); c->Next()) keys.push_back(c->key());
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (Strings{"big#%0", "big#%1", "big#%2", "empty#%0"}));
  in.reset();

  Workspace fresh(dir.path());
  fresh.RunOperatorOnce(Op("Load", {}, {},
                           {Str("db", dir / "abs.db"), Str("db_type", GetParam()),
                            Int("absolute_path", 1), Int("load_all", 1)}));
  ExpectFloats(&fresh, "big", {10}, 0.0f);
  ExpectFloats(&fresh, "empty", {0, 3}, 0.0f);
}

INSTANTIATE_TEST_SUITE_P(Backends, SaveLoad, ::testing::Values("minidb", "lmdb", "leveldb"));

TEST(SaveLoadOps, PrefixesAndOverrides) {
  TempDir dir;
  Workspace ws(dir.path());
  PutFloats(&ws, "gpu_0/w", {2}, 1.0f);
  PutFloats(&ws, "gpu_0/b", {3}, 5.0f);
  ws.RunOperatorOnce(
      Op("Save", {"gpu_0/w", "gpu_0/b"}, {},
         {Str("db", "p.db"), Str("db_type", "minidb"), Str("strip_prefix", "gpu_0/")}));
  ws.RunOperatorOnce(
      Op("Load", {}, {"gpu_1/w", "gpu_1/b"},
         {Str("db", "p.db"), Str("db_type", "minidb"), Str("add_prefix", "gpu_1/")}));
  ExpectFloats(&ws, "gpu_1/w", {2}, 1.0f);
  ExpectFloats(&ws, "gpu_1/b", {3}, 5.0f);

  // strip_prefix on Load drops everything up to the match; source_blob_names maps the outputs.
  ws.RunOperatorOnce(Op("Save", {"gpu_0/w"}, {},
                        {Str("db", "o.db"), Str("db_type", "minidb"),
                         List("blob_name_overrides", {"model/weights"})}));
  ws.RunOperatorOnce(Op("Load", {}, {"x"},
                        {Str("db", "o.db"), Str("db_type", "minidb"), Str("strip_prefix", "model/"),
                         List("source_blob_names", {"weights"})}));
  ExpectFloats(&ws, "x", {2}, 1.0f);

  std::string err = ErrorOf([&] {
    ws.RunOperatorOnce(Op("Save", {"gpu_0/w", "gpu_0/b"}, {},
                          {Str("db", "d.db"), Str("db_type", "minidb"),
                           List("blob_name_overrides", {"same", "same"})}));
  });
  EXPECT_NE(err.find("[Save]"), std::string::npos) << err;
  EXPECT_NE(err.find("'same'"), std::string::npos) << err;
  err = ErrorOf([&] {
    ws.RunOperatorOnce(Op("Save", {"gpu_0/w"}, {},
                          {Str("db", "d.db"), Str("db_type", "minidb"), Str("strip_prefix", "g"),
                           List("blob_name_overrides", {"x"})}));
  });
  EXPECT_NE(err.find("strip_prefix"), std::string::npos) << err;
}

TEST(SaveLoadOps, MissingBlobsAndAllowIncomplete) {
  TempDir dir;
  Workspace ws(dir.path());
  PutFloats(&ws, "a", {1}, 1.0f);
  ws.RunOperatorOnce(Op("Save", {"a"}, {}, {Str("db", "a.db"), Str("db_type", "lmdb")}));
  std::string err = ErrorOf([&] {
    ws.RunOperatorOnce(
        Op("Load", {}, {"a", "missing"}, {Str("db", "a.db"), Str("db_type", "lmdb")}));
  });
  EXPECT_NE(err.find("[Load]"), std::string::npos) << err;
  EXPECT_NE(err.find("Expected to load 2 blobs, got 1 only."), std::string::npos) << err;
  EXPECT_NE(err.find("'missing'"), std::string::npos) << err;
  ws.RunOperatorOnce(Op("Load", {}, {"a", "missing"},
                        {Str("db", "a.db"), Str("db_type", "lmdb"), Int("allow_incomplete", 1)}));
  ExpectFloats(&ws, "a", {1}, 1.0f);

  err = ErrorOf([&] {
    ws.RunOperatorOnce(Op("Load", {}, {"a"}, {Str("db", "nowhere.db"), Str("db_type", "minidb")}));
  });
  EXPECT_NE(err.find("nowhere.db"), std::string::npos) << err;
  err = ErrorOf([&] {
    ws.RunOperatorOnce(Op("Save", {"a"}, {}, {Str("db", "x.db"), Str("db_type", "nosuch")}));
  });
  EXPECT_NE(err.find("nosuch"), std::string::npos) << err;
}

// Writes raw records (already serialized BlobProtos) into a minidb.
void WriteRaw(const std::string& path, const std::vector<std::pair<std::string, std::string>>& rs) {
  auto out = db::CreateDB("minidb", path, db::NEW);
  auto txn = out->NewTransaction();
  for (const auto& kv : rs) txn->Put(kv.first, kv.second);
}

TEST(SaveLoadOps, ChunkCoverageIsChecked) {
  TempDir dir;
  Blob blob;
  Tensor* t = blob.GetMutableTensor(Device{});
  t->Resize(6);
  for (int i = 0; i < 6; ++i) t->mutable_data<float>()[i] = static_cast<float>(i);
  std::vector<std::pair<std::string, std::string>> chunks;
  SerializeBlob(
      blob, "t", [&](const std::string& k, const std::string& v) { chunks.emplace_back(k, v); }, 3);
  ASSERT_EQ(chunks.size(), 2u);
  Workspace ws(dir.path());

  WriteRaw(dir / "dup.db", {chunks[0], chunks[0], chunks[1]});
  std::string err = ErrorOf([&] {
    ws.RunOperatorOnce(Op("Load", {}, {"t"}, {Str("db", "dup.db"), Str("db_type", "minidb")}));
  });
  EXPECT_NE(err.find("twice"), std::string::npos) << err;

  WriteRaw(dir / "half.db", {chunks[1]});
  err = ErrorOf([&] {
    ws.RunOperatorOnce(Op("Load", {}, {"t"}, {Str("db", "half.db"), Str("db_type", "minidb")}));
  });
  EXPECT_NE(err.find("incomplete"), std::string::npos) << err;
  EXPECT_NE(err.find("half.db"), std::string::npos) << err;

  WriteRaw(dir / "ok.db", {chunks[1], chunks[0]});
  ws.RunOperatorOnce(Op("Load", {}, {"t"}, {Str("db", "ok.db"), Str("db_type", "minidb")}));
  ExpectFloats(&ws, "t", {6}, 0.0f);

  // The same blob in two DBs.
  err = ErrorOf([&] {
    ws.RunOperatorOnce(
        Op("Load", {}, {"t"}, {List("dbs", {"half.db", "ok.db"}), Str("db_type", "minidb")}));
  });
  EXPECT_NE(err.find("two DBs"), std::string::npos) << err;
}

TEST(SaveLoadOps, KeepDeviceControlsTheTensorDevice) {
  TempDir dir;
  Blob blob;
  blob.GetMutableTensor(Device{})->Resize(2);
  blob.GetMutableTensor(Device{})->mutable_data<float>()[0] = 3.0f;
  blob.GetMutableTensor(Device{})->mutable_data<float>()[1] = 4.0f;
  BlobProto proto;
  ASSERT_TRUE(proto.ParseFromString(SerializeBlob(blob, "g")));
  proto.mutable_tensor()->mutable_device_detail()->set_device_type(kCUDA);
  proto.mutable_tensor()->mutable_device_detail()->set_cuda_gpu_id(0);
  WriteRaw(dir / "gpu.db", {{"g#%0", proto.SerializeAsString()}});

  Workspace ws(dir.path());
  ws.RunOperatorOnce(Op("Load", {}, {"g"}, {Str("db", "gpu.db"), Str("db_type", "minidb")}));
  EXPECT_EQ(ws.GetBlob("g")->Get<Tensor>().device().type, kCPU);
  EXPECT_EQ(ws.GetBlob("g")->Get<Tensor>().data<float>()[1], 4.0f);
  std::string err = ErrorOf([&] {
    ws.RunOperatorOnce(Op("Load", {}, {"g"},
                          {Str("db", "gpu.db"), Str("db_type", "minidb"), Int("keep_device", 1)}));
  });
  if (!err.empty()) EXPECT_NE(err.find("CUDA"), std::string::npos) << err;
}

TEST(SaveLoadOps, CudaLoadOnACpuBuildIsAClearError) {
  if (ErrorOf([] { GetAllocator(kCUDA); }).empty()) GTEST_SKIP() << "this build has CUDA";
  TempDir dir;
  Workspace ws(dir.path());
  PutFloats(&ws, "w", {2}, 1.0f);
  ws.RunOperatorOnce(Op("Save", {"w"}, {}, {Str("db", "c.db"), Str("db_type", "minidb")}));
  OperatorDef load = Op("Load", {}, {"w"}, {Str("db", "c.db"), Str("db_type", "minidb")});
  load.mutable_device_option()->set_device_type(kCUDA);
  std::string err = ErrorOf([&] { ws.RunOperatorOnce(load); });
  EXPECT_NE(err.find("[Load]"), std::string::npos) << err;
  EXPECT_NE(err.find("CUDA"), std::string::npos) << err;
  EXPECT_NE(err.find("'w'"), std::string::npos) << err;
}

TEST(SaveLoadOps, LoadFromAReaderIsNotRewound) {
  TempDir dir;
  Workspace ws(dir.path());
  PutFloats(&ws, "a", {1}, 1.0f);
  PutFloats(&ws, "b", {1}, 2.0f);
  PutFloats(&ws, "c", {1}, 3.0f);
  ws.RunOperatorOnce(
      Op("Save", {"a", "b", "c"}, {}, {Str("db", "r.db"), Str("db_type", "minidb")}));
  ws.RunOperatorOnce(
      Op("CreateDB", {}, {"reader"}, {Str("db", dir / "r.db"), Str("db_type", "minidb")}));
  Workspace target(&ws);
  target.RunOperatorOnce(Op("Load", {"reader"}, {"b"}, {}));
  ExpectFloats(&target, "b", {1}, 2.0f);
  const auto& reader = ws.GetBlob("reader")->Get<db::DBReader>();
  EXPECT_EQ(reader.cursor()->key(), "b#%0");  // left on the last record consumed
  std::string key, value;
  reader.Read(&key, &value);
  EXPECT_EQ(key, "b#%0");
  reader.Read(&key, &value);
  EXPECT_EQ(key, "c#%0");
}

TEST(SaveLoadOps, CheckpointSavesEveryN) {
  TempDir dir;
  Workspace ws(dir.path());
  PutFloats(&ws, "w", {2}, 1.0f);
  for (int64_t iter : {10, 11, 15}) {
    PutCounter(&ws, "iter", iter);
    ws.RunOperatorOnce(Op("Checkpoint", {"iter", "w"}, {},
                          {Str("db", "ckpt_%05d.db"), Str("db_type", "minidb"), Int("every", 5)}));
  }
  EXPECT_TRUE(std::filesystem::exists(dir / "ckpt_00010.db"));
  EXPECT_FALSE(std::filesystem::exists(dir / "ckpt_00011.db"));
  EXPECT_TRUE(std::filesystem::exists(dir / "ckpt_00015.db"));
  Workspace fresh(dir.path());
  fresh.RunOperatorOnce(
      Op("Load", {}, {"iter", "w"}, {Str("db", "ckpt_00015.db"), Str("db_type", "minidb")}));
  EXPECT_EQ(fresh.GetBlob("iter")->Get<Tensor>().data<int64_t>()[0], 15);
  ExpectFloats(&fresh, "w", {2}, 1.0f);

  PutCounter(&ws, "iter", 3);
  ws.RunOperatorOnce(
      Op("Snapshot", {"iter", "w"}, {}, {Str("db", "snap_%d.db"), Str("db_type", "lmdb")}));
  EXPECT_TRUE(std::filesystem::exists(dir / "snap_3.db"));
  std::string err = ErrorOf([&] {
    ws.RunOperatorOnce(
        Op("Checkpoint", {"iter"}, {}, {Str("db", "bad_%s"), Str("db_type", "minidb")}));
  });
  EXPECT_NE(err.find("bad_%s"), std::string::npos) << err;
}

TEST(SaveLoadOps, GradientsAreRegistered) {
  for (const char* type : {"Save", "Load", "Checkpoint", "Snapshot", "DBExists", "CreateDB"}) {
    EXPECT_TRUE(GradientRegistry::Has(type)) << type;
  }
}

}  // namespace
}  // namespace caffe2
