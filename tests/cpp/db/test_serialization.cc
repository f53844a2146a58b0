#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

#include "core/allocator.h"
#include "core/flags.h"
#include "core/serialization.h"
#include "db_test_util.h"

namespace caffe2 {
namespace {

using testing::ErrorOf;

// Restores a flag's value at the end of a scope.
class FlagGuard {
 public:
  FlagGuard(const std::string& name, const std::string& value)
      : name_(name), old_(FlagValue(name)) {
    SetFlag(name, value);
  }
  ~FlagGuard() { SetFlag(name_, old_); }

 private:
  std::string name_, old_;
};

template <class T>
void FillTensor(Tensor* t, const std::vector<int64_t>& dims, const std::vector<T>& values) {
  t->Resize(dims);
  T* data = t->mutable_data<T>();
  for (size_t i = 0; i < values.size(); ++i) data[i] = values[i];
}

BlobProto Parse(const std::string& bytes) {
  BlobProto proto;
  EXPECT_TRUE(proto.ParseFromString(bytes));
  return proto;
}

template <class T, class Eq>
void CheckRoundTrip(const std::vector<T>& values, DataType expected_type, Eq eq) {
  Blob blob;
  FillTensor(blob.GetMutableTensor(Device{}), {static_cast<int64_t>(values.size()), 1}, values);
  const std::string bytes = SerializeBlob(blob, "x");
  BlobProto proto = Parse(bytes);
  EXPECT_EQ(proto.name(), "x");
  EXPECT_EQ(proto.type(), "Tensor");
  EXPECT_EQ(proto.tensor().name(), "x");
  EXPECT_EQ(static_cast<int>(proto.tensor().data_type()), static_cast<int>(expected_type));
  EXPECT_FALSE(proto.tensor().has_device_detail());
  ASSERT_TRUE(proto.tensor().has_segment());
  EXPECT_EQ(proto.tensor().segment().begin(), 0);
  EXPECT_EQ(proto.tensor().segment().end(), static_cast<int64_t>(values.size()));

  Blob restored;
  DeserializeBlob(bytes, &restored);
  const Tensor& t = restored.Get<Tensor>();
  EXPECT_EQ(t.device().type, kCPU);
  EXPECT_EQ(t.dims(), (std::vector<int64_t>{static_cast<int64_t>(values.size()), 1}));
  ASSERT_TRUE(t.IsType<T>());
  for (size_t i = 0; i < values.size(); ++i) EXPECT_TRUE(eq(t.data<T>()[i], values[i])) << i;
}

template <class T>
void CheckRoundTrip(const std::vector<T>& values, DataType expected_type) {
  CheckRoundTrip(values, expected_type, [](const T& a, const T& b) { return a == b; });
}

TEST(Serialization, EveryDtypeRoundTrips) {
  CheckRoundTrip<float>({1.5f, -2.25f, 3e30f}, DataType::FLOAT);
  CheckRoundTrip<double>({1.0 / 3, -1e300}, DataType::DOUBLE);
  CheckRoundTrip<int32_t>({INT32_MIN, 0, INT32_MAX}, DataType::INT32);
  CheckRoundTrip<int64_t>({INT64_MIN, 7, INT64_MAX}, DataType::INT64);
  CheckRoundTrip<bool>({true, false, true}, DataType::BOOL);
  CheckRoundTrip<uint8_t>({0, 128, 255}, DataType::UINT8);
  CheckRoundTrip<int8_t>({-128, 0, 127}, DataType::INT8);
  CheckRoundTrip<uint16_t>({0, 40000, 65535}, DataType::UINT16);
  CheckRoundTrip<int16_t>({-32768, 1, 32767}, DataType::INT16);
  CheckRoundTrip<std::string>({"", "abc", std::string("\0\xff", 2)}, DataType::STRING);
  CheckRoundTrip<float16>({FloatToHalf(1.0f), FloatToHalf(-0.5f), FloatToHalf(65504.f)},
                          DataType::FLOAT16,
                          [](const float16& a, const float16& b) { return a.x == b.x; });
}

TEST(Serialization, StorageFieldsFollowTheWireRules) {
  Blob blob;
  FillTensor<int16_t>(blob.GetMutableTensor(Device{}), {2}, {-3, 4});
  TensorProto t = Parse(SerializeBlob(blob, "s")).tensor();
  EXPECT_EQ(t.int32_data_size(), 2);
  EXPECT_EQ(t.int32_data(0), -3);
  FillTensor<int64_t>(blob.GetMutableTensor(Device{}), {1}, {5});
  t = Parse(SerializeBlob(blob, "l")).tensor();
  EXPECT_EQ(t.int64_data_size(), 1);
  EXPECT_EQ(t.int32_data_size(), 0);
  FillTensor<double>(blob.GetMutableTensor(Device{}), {1}, {2.0});
  EXPECT_EQ(Parse(SerializeBlob(blob, "d")).tensor().double_data_size(), 1);
}

TEST(Serialization, Float16BothEncodings) {
  Blob blob;
  FillTensor<float16>(blob.GetMutableTensor(Device{}), {2},
                      {FloatToHalf(1.0f), FloatToHalf(-2.0f)});
  TensorProto as_ints = Parse(SerializeBlob(blob, "h")).tensor();
  EXPECT_FALSE(as_ints.has_byte_data());
  ASSERT_EQ(as_ints.int32_data_size(), 2);
  EXPECT_EQ(as_ints.int32_data(0), 0x3c00);
  EXPECT_EQ(as_ints.int32_data(1), 0xc000);

  std::string bytes;
  {
    FlagGuard flag("caffe2_serialize_fp16_as_bytes", "true");
    bytes = SerializeBlob(blob, "h");
  }
  TensorProto as_bytes = Parse(bytes).tensor();
  EXPECT_EQ(as_bytes.int32_data_size(), 0);
  EXPECT_EQ(as_bytes.byte_data(), std::string("\x00\x3c\x00\xc0", 4));
  Blob restored;
  DeserializeBlob(bytes, &restored);
  EXPECT_EQ(restored.Get<Tensor>().data<float16>()[1].x, 0xc000);
}

TEST(Serialization, ByteIsReadIntoUint8) {
  BlobProto proto;
  proto.set_name("img");
  proto.set_type("Tensor");
  proto.mutable_tensor()->add_dims(3);
  proto.mutable_tensor()->set_data_type(TensorProto::BYTE);
  proto.mutable_tensor()->set_byte_data(std::string("\x01\x02\xff", 3));
  Blob blob;
  DeserializeBlob(proto, &blob);
  const Tensor& t = blob.Get<Tensor>();
  ASSERT_TRUE(t.IsType<uint8_t>());
  EXPECT_EQ(t.data<uint8_t>()[2], 255);

  proto.mutable_tensor()->set_byte_data("\x01");
  EXPECT_NE(ErrorOf([&] { DeserializeBlob(proto, &blob); }).find("byte_data"), std::string::npos);
}

TEST(Serialization, ChunksCoverTheTensor) {
  Blob blob;
  std::vector<float> values(10);
  for (int i = 0; i < 10; ++i) values[i] = static_cast<float>(i);
  FillTensor(blob.GetMutableTensor(Device{}), {5, 2}, values);
  std::map<std::string, std::string> chunks;
  SerializeBlob(
      blob, "w", [&](const std::string& k, const std::string& v) { chunks[k] = v; }, 3);
  ASSERT_EQ(chunks.size(), 4u);
  const std::vector<std::pair<int64_t, int64_t>> segments = {{0, 3}, {3, 6}, {6, 9}, {9, 10}};
  for (int i = 0; i < 4; ++i) {
    const std::string key = "w#%" + std::to_string(i);
    ASSERT_TRUE(chunks.count(key)) << key;
    TensorProto t = Parse(chunks[key]).tensor();
    EXPECT_EQ(t.segment().begin(), segments[i].first);
    EXPECT_EQ(t.segment().end(), segments[i].second);
    EXPECT_EQ(t.dims_size(), 2);
  }
  // Chunks restore in any order.
  Blob restored;
  for (const char* key : {"w#%2", "w#%0", "w#%3", "w#%1"}) DeserializeBlob(chunks[key], &restored);
  const Tensor& t = restored.Get<Tensor>();
  EXPECT_EQ(t.dims(), (std::vector<int64_t>{5, 2}));
  for (int i = 0; i < 10; ++i) EXPECT_EQ(t.data<float>()[i], i);
}

TEST(Serialization, DefaultChunkSizeComesFromTheFlag) {
  FlagGuard flag("caffe2_tensor_chunk_size", "4");
  Blob blob;
  FillTensor<int32_t>(blob.GetMutableTensor(Device{}), {9}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  std::vector<std::string> keys;
  SerializeBlob(blob, "v", [&](const std::string& k, const std::string&) { keys.push_back(k); });
  EXPECT_EQ(keys, (std::vector<std::string>{"v#%0", "v#%1", "v#%2"}));
  // The string form never chunks.
  EXPECT_EQ(Parse(SerializeBlob(blob, "v")).tensor().int32_data_size(), 9);
}

TEST(Serialization, ThreadedChunksArriveInOrder) {
  FlagGuard threads("caffe2_max_tensor_serializer_threads", "2");
  Blob blob;
  FillTensor<int64_t>(blob.GetMutableTensor(Device{}), {5}, {10, 11, 12, 13, 14});
  std::vector<std::string> keys;
  Blob restored;
  SerializeBlob(
      blob, "t",
      [&](const std::string& k, const std::string& v) {
        keys.push_back(k);
        DeserializeBlob(v, &restored);
      },
      1);
  EXPECT_EQ(keys, (std::vector<std::string>{"t#%0", "t#%1", "t#%2", "t#%3", "t#%4"}));
  EXPECT_EQ(restored.Get<Tensor>().data<int64_t>()[4], 14);
}

TEST(Serialization, EmptyTensorIsOneChunk) {
  Blob blob;
  blob.GetMutableTensor(Device{})->Resize(0, 4);
  blob.GetMutableTensor(Device{})->mutable_data<float>();
  std::vector<std::string> keys, values;
  SerializeBlob(blob, "e", [&](const std::string& k, const std::string& v) {
    keys.push_back(k);
    values.push_back(v);
  });
  ASSERT_EQ(keys, std::vector<std::string>{"e#%0"});
  TensorProto t = Parse(values[0]).tensor();
  EXPECT_TRUE(t.has_segment());
  EXPECT_EQ(t.segment().begin(), 0);
  EXPECT_EQ(t.segment().end(), 0);
  Blob restored;
  DeserializeBlob(values[0], &restored);
  EXPECT_EQ(restored.Get<Tensor>().dims(), (std::vector<int64_t>{0, 4}));
  EXPECT_TRUE(restored.Get<Tensor>().IsType<float>());
}

TEST(Serialization, UntypedEmptyTensorIsUndefined) {
  Blob blob;
  blob.GetMutableTensor(Device{})->Resize(0);
  const std::string bytes = SerializeBlob(blob, "u");
  EXPECT_EQ(Parse(bytes).tensor().data_type(), TensorProto::UNDEFINED);
  Blob restored;
  DeserializeBlob(bytes, &restored);
  EXPECT_EQ(restored.Get<Tensor>().dims(), std::vector<int64_t>{0});
  EXPECT_FALSE(restored.Get<Tensor>().meta().initialized());
}

TEST(Serialization, StringAndMutexBlobsUseTheBareName) {
  Blob blob;
  *blob.GetMutable<std::string>() = std::string("payload\0x", 9);
  std::vector<std::string> keys;
  std::string value;
  SerializeBlob(blob, "s", [&](const std::string& k, const std::string& v) {
    keys.push_back(k);
    value = v;
  });
  EXPECT_EQ(keys, std::vector<std::string>{"s"});
  EXPECT_EQ(Parse(value).type(), "std::string");
  Blob restored;
  DeserializeBlob(value, &restored);
  EXPECT_EQ(restored.Get<std::string>(), std::string("payload\0x", 9));

  Blob mutex;
  mutex.Reset(new std::unique_ptr<std::mutex>(new std::mutex()));
  BlobProto proto = Parse(SerializeBlob(mutex, "m"));
  EXPECT_EQ(proto.type(), "std::unique_ptr<std::mutex>");
  EXPECT_TRUE(proto.has_content());
  EXPECT_EQ(proto.content(), "");
  Blob restored_mutex;
  DeserializeBlob(proto, &restored_mutex);
  ASSERT_TRUE(restored_mutex.IsType<std::unique_ptr<std::mutex>>());
  EXPECT_NE(restored_mutex.Get<std::unique_ptr<std::mutex>>(), nullptr);
}

TEST(Serialization, BadInputGivesClearErrors) {
  Blob blob;
  std::string err =
      ErrorOf([&] { DeserializeBlob(std::string("\x0a\x01w\xff\xff\xff", 6), &blob); });
  EXPECT_NE(err.find("'w'"), std::string::npos) << err;
  EXPECT_NE(err.find("not a valid serialized BlobProto"), std::string::npos) << err;

  BlobProto proto;
  proto.set_name("short");
  proto.set_type("Tensor");
  proto.mutable_tensor()->add_dims(3);
  proto.mutable_tensor()->add_float_data(1.0f);
  err = ErrorOf([&] { DeserializeBlob(proto, &blob); });
  EXPECT_NE(err.find("'short'"), std::string::npos) << err;
  EXPECT_NE(err.find("float_data"), std::string::npos) << err;

  proto.mutable_tensor()->mutable_segment()->set_begin(2);
  proto.mutable_tensor()->mutable_segment()->set_end(5);
  EXPECT_NE(ErrorOf([&] { DeserializeBlob(proto, &blob); }).find("out of range"),
            std::string::npos);

  proto.set_type("NoSuchType");
  err = ErrorOf([&] { DeserializeBlob(proto, &blob); });
  EXPECT_NE(err.find("NoSuchType"), std::string::npos) << err;
  EXPECT_NE(err.find("std::string"), std::string::npos) << err;  // lists the known types

  Blob empty;
  err = ErrorOf([&] { SerializeBlob(empty, "nothing"); });
  EXPECT_NE(err.find("'nothing'"), std::string::npos) << err;

  Blob no_data;
  no_data.GetMutableTensor(Device{})->Resize(3);
  err = ErrorOf([&] { SerializeBlob(no_data, "nodata"); });
  EXPECT_NE(err.find("'nodata'"), std::string::npos) << err;
}

TEST(Serialization, CudaTensorOnACpuBuildIsAClearError) {
  bool has_cuda = ErrorOf([] { GetAllocator(kCUDA); }).empty();
  if (has_cuda) GTEST_SKIP() << "this build has a CUDA backend";
  BlobProto proto;
  proto.set_name("g");
  proto.set_type("Tensor");
  proto.mutable_tensor()->add_dims(1);
  proto.mutable_tensor()->add_float_data(1.0f);
  proto.mutable_tensor()->mutable_device_detail()->set_device_type(kCUDA);
  proto.mutable_tensor()->mutable_device_detail()->set_cuda_gpu_id(1);
  Blob blob;
  std::string err = ErrorOf([&] { DeserializeBlob(proto, &blob); });
  EXPECT_NE(err.find("'g'"), std::string::npos) << err;
  EXPECT_NE(err.find("CUDA"), std::string::npos) << err;
}

struct Custom {
  int value = 0;
};

TEST(Serialization, RegistriesAreExtensible) {
  RegisterBlobSerializer(std::type_index(typeid(Custom)), [](const Blob& b, const std::string& name,
                                                             const BlobAcceptor& acceptor, int) {
    BlobProto proto;
    proto.set_name(name);
    proto.set_type("Custom");
    proto.set_content(std::to_string(b.Get<Custom>().value));
    acceptor(name, proto.SerializeAsString());
  });
  RegisterBlobDeserializer("Custom", [](const BlobProto& proto, Blob* blob) {
    blob->GetMutable<Custom>()->value = std::stoi(proto.content());
  });
  EXPECT_TRUE(HasBlobSerializer(std::type_index(typeid(Custom))));
  EXPECT_TRUE(HasBlobDeserializer("Custom"));
  Blob blob;
  blob.GetMutable<Custom>()->value = 42;
  Blob restored;
  DeserializeBlob(SerializeBlob(blob, "c"), &restored);
  EXPECT_EQ(restored.Get<Custom>().value, 42);
}

}  // namespace
}  // namespace caffe2
