#include "core/serialization.h"

#include <algorithm>
#include <cstring>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "core/allocator.h"
#include "core/flags.h"

C2_DEFINE_int(caffe2_tensor_chunk_size, 1000000,
              "Elements per chunk when a tensor is serialized (Save writes one record per chunk).");
C2_DEFINE_bool(caffe2_serialize_fp16_as_bytes, false,
               "Write float16 tensors into TensorProto.byte_data instead of int32_data.");
C2_DEFINE_int(
    caffe2_max_tensor_serializer_threads, 16,
    "Most threads encoding the chunks of one tensor (chunks still reach the DB in order).");

namespace caffe2 {
namespace {

struct Registries {
  std::mutex mutex;
  std::unordered_map<std::type_index, BlobSerializerFn> serializers;
  std::map<std::string, BlobDeserializerFn> deserializers;
};

std::string SerializeChunk(const Tensor& tensor, const std::string& name, int64_t begin,
                           int64_t end) {
  BlobProto proto;
  proto.set_name(name);
  proto.set_type(kTensorBlobType);
  SerializeTensor(tensor, name, begin, end, proto.mutable_tensor());
  return proto.SerializeAsString();
}

// Chunks are encoded by up to --caffe2_max_tensor_serializer_threads threads at a time and handed
// to the acceptor in order, from the calling thread (so acceptors need not be thread-safe).
void SerializeTensorBlob(const Blob& blob, const std::string& name, const BlobAcceptor& acceptor,
                         int chunk_size) {
  const Tensor& tensor = blob.Get<Tensor>();
  C2_ENFORCE(tensor.initialized(), "the tensor was never resized (uninitialized)");
  const int64_t numel = tensor.numel();
  const int64_t chunk = chunk_size == kNoChunking ? std::max<int64_t>(numel, 1) : chunk_size;
  const int64_t num_chunks = std::max<int64_t>((numel + chunk - 1) / chunk, 1);
  const int64_t threads = std::max(1, FLAGS_caffe2_max_tensor_serializer_threads);
  auto key = [&name](int64_t index) { return name + kChunkIdSeparator + std::to_string(index); };
  if (num_chunks == 1 || threads == 1 || tensor.device().type != kCPU) {
    for (int64_t i = 0; i < num_chunks; ++i) {
      acceptor(key(i), SerializeChunk(tensor, name, i * chunk, std::min((i + 1) * chunk, numel)));
    }
    return;
  }
  for (int64_t first = 0; first < num_chunks; first += threads) {
    const int64_t last = std::min(first + threads, num_chunks);
    std::vector<std::future<std::string>> wave;
    for (int64_t i = first; i < last; ++i) {
      wave.push_back(std::async(std::launch::async, SerializeChunk, std::cref(tensor),
                                std::cref(name), i * chunk, std::min((i + 1) * chunk, numel)));
    }
    for (int64_t i = first; i < last; ++i) acceptor(key(i), wave[i - first].get());
  }
}

// A fresh tensor unless the proto is a partial segment of the tensor the blob already holds.
void DeserializeTensorBlob(const BlobProto& proto, Blob* blob) {
  const TensorProto& tp = proto.tensor();
  const Device device = DeviceFromTensorProto(tp);
  if (device.type != kCPU) {
    try {
      GetAllocator(device.type);
    } catch (const EnforceNotMet&) {
      C2_THROW("the tensor belongs on ", DeviceString(device),
               " (its device_detail, or the device ", "of the Load op) but this build has no ",
               DeviceTypeName(device.type),
               " backend; load it on the CPU instead (a CPU Load op with keep_device=0)");
    }
  }
  bool partial = false;
  if (tp.has_segment()) {
    const int64_t numel = CheckedNumel(std::vector<int64_t>(tp.dims().begin(), tp.dims().end()));
    partial = tp.segment().begin() != 0 || tp.segment().end() != numel;
  }
  Tensor* tensor = nullptr;
  if (partial && blob->IsType<Tensor>() && blob->Get<Tensor>().device().type == device.type) {
    tensor = blob->GetMutableTensor(device);
  } else {
    tensor = blob->Reset(new Tensor(device));
  }
  DeserializeTensor(tp, tensor);
}

void SerializeStringBlob(const Blob& blob, const std::string& name, const BlobAcceptor& acceptor,
                         int) {
  BlobProto proto;
  proto.set_name(name);
  proto.set_type("std::string");
  proto.set_content(blob.Get<std::string>());
  acceptor(name, proto.SerializeAsString());
}

void SerializeMutexBlob(const Blob&, const std::string& name, const BlobAcceptor& acceptor, int) {
  BlobProto proto;
  proto.set_name(name);
  proto.set_type("std::unique_ptr<std::mutex>");
  proto.set_content("");
  acceptor(name, proto.SerializeAsString());
}

Registries& GetRegistries() {
  static auto* r = [] {
    auto* reg = new Registries();
    reg->serializers[std::type_index(typeid(Tensor))] = &SerializeTensorBlob;
    reg->serializers[std::type_index(typeid(std::string))] = &SerializeStringBlob;
    reg->serializers[std::type_index(typeid(std::unique_ptr<std::mutex>))] = &SerializeMutexBlob;
    reg->deserializers[kTensorBlobType] = &DeserializeTensorBlob;
    reg->deserializers["std::string"] = [](const BlobProto& proto, Blob* blob) {
      blob->Reset(new std::string(proto.content()));
    };
    reg->deserializers["std::unique_ptr<std::mutex>"] = [](const BlobProto&, Blob* blob) {
      blob->Reset(new std::unique_ptr<std::mutex>(new std::mutex()));
    };
    return reg;
  }();
  return *r;
}

BlobSerializerFn FindSerializer(std::type_index type) {
  auto& r = GetRegistries();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.serializers.find(type);
  return it == r.serializers.end() ? BlobSerializerFn() : it->second;
}

BlobDeserializerFn FindDeserializer(const std::string& type, std::string* known) {
  auto& r = GetRegistries();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.deserializers.find(type);
  if (it != r.deserializers.end()) return it->second;
  for (const auto& kv : r.deserializers) *known += (known->empty() ? "" : ", ") + kv.first;
  return BlobDeserializerFn();
}

// The name field of a BlobProto that failed to parse, when it is the leading field (as written by
// every protobuf serializer); "" otherwise.
std::string LeadingNameField(const std::string& bytes) {
  if (bytes.size() < 2 || bytes[0] != 0x0A) return "";
  size_t pos = 1;
  uint64_t len = 0;
  for (int shift = 0; pos < bytes.size() && shift < 35; shift += 7) {
    auto byte = static_cast<unsigned char>(bytes[pos++]);
    len |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      if (len > bytes.size() - pos || len > 1024) return "";
      return bytes.substr(pos, len);
    }
  }
  return "";
}

}  // namespace

bool RegisterBlobSerializer(std::type_index type, BlobSerializerFn fn) {
  auto& r = GetRegistries();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.serializers[type] = std::move(fn);
  return true;
}

bool RegisterBlobDeserializer(const std::string& type, BlobDeserializerFn fn) {
  auto& r = GetRegistries();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.deserializers[type] = std::move(fn);
  return true;
}

bool HasBlobSerializer(std::type_index type) { return static_cast<bool>(FindSerializer(type)); }

bool HasBlobDeserializer(const std::string& type) {
  std::string known;
  return static_cast<bool>(FindDeserializer(type, &known));
}

void SerializeBlob(const Blob& blob, const std::string& name, const BlobAcceptor& acceptor,
                   int chunk_size) {
  C2_ENFORCE(!blob.IsEmpty(), "Cannot serialize blob '", name, "': it is empty (never written)");
  C2_ENFORCE(chunk_size >= kDefaultChunkSize, "Cannot serialize blob '", name,
             "': invalid chunk size ", chunk_size);
  if (chunk_size == kDefaultChunkSize) {
    chunk_size = FLAGS_caffe2_tensor_chunk_size > 0 ? FLAGS_caffe2_tensor_chunk_size : kNoChunking;
  }
  BlobSerializerFn fn = FindSerializer(std::type_index(*blob.type()));
  C2_ENFORCE(fn, "Cannot serialize blob '", name, "': no serializer is registered for its type ",
             blob.TypeName());
  try {
    fn(blob, name, acceptor, chunk_size);
  } catch (const std::exception& e) {
    C2_THROW("Cannot serialize blob '", name, "' (", blob.TypeName(), "): ", e.what());
  }
}

std::string SerializeBlob(const Blob& blob, const std::string& name) {
  std::string result;
  SerializeBlob(
      blob, name, [&result](const std::string&, const std::string& data) { result = data; },
      kNoChunking);
  return result;
}

void DeserializeBlob(const std::string& serialized, Blob* blob) {
  BlobProto proto;
  if (!proto.ParseFromString(serialized)) {
    std::string name = LeadingNameField(serialized);
    C2_THROW("Cannot deserialize blob", name.empty() ? "" : " '" + name + "'", ": ",
             serialized.size(), " bytes are not a valid serialized BlobProto");
  }
  DeserializeBlob(proto, blob);
}

void DeserializeBlob(const BlobProto& proto, Blob* blob) {
  C2_ENFORCE(blob != nullptr, "DeserializeBlob into a null blob");
  std::string known;
  BlobDeserializerFn fn = FindDeserializer(proto.type(), &known);
  C2_ENFORCE(fn, "Cannot deserialize blob '", proto.name(), "': no deserializer for type '",
             proto.type(), "' (known types: ", known, ")");
  try {
    fn(proto, blob);
  } catch (const std::exception& e) {
    C2_THROW("Cannot deserialize blob '", proto.name(), "' (type '", proto.type(),
             "'): ", e.what());
  }
}

Device DeviceFromTensorProto(const TensorProto& proto) {
  if (!proto.has_device_detail()) return Device{};
  const DeviceOption& d = proto.device_detail();
  return Device{d.device_type(), d.device_type() == kCPU ? 0 : d.cuda_gpu_id()};
}

namespace {

template <class Field>
void CheckCount(const Field& field, const char* field_name, int64_t n) {
  C2_ENFORCE(static_cast<int64_t>(field.size()) == n, "TensorProto has ", field.size(), " ",
             field_name, " values but its segment needs ", n);
}

template <class T, class Field>
void CopyOut(const Field& field, const char* field_name, int64_t n, void* dst) {
  CheckCount(field, field_name, n);
  if (n > 0) std::memcpy(dst, field.data(), static_cast<size_t>(n) * sizeof(T));
}

template <class T>
void NarrowFromInt32(const TensorProto& proto, int64_t n, void* dst) {
  CheckCount(proto.int32_data(), "int32_data", n);
  auto* out = static_cast<T*>(dst);
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(proto.int32_data(static_cast<int>(i)));
}

void DecodeFloat16(const TensorProto& proto, int64_t n, void* dst) {
  auto* out = static_cast<float16*>(dst);
  if (proto.has_byte_data()) {
    const std::string& bytes = proto.byte_data();
    C2_ENFORCE(static_cast<int64_t>(bytes.size()) == 2 * n, "TensorProto has ", bytes.size(),
               " bytes of float16 byte_data but its segment needs ", 2 * n);
    for (int64_t i = 0; i < n; ++i) {
      out[i].x = static_cast<uint16_t>(static_cast<unsigned char>(bytes[2 * i]) |
                                       (static_cast<unsigned char>(bytes[2 * i + 1]) << 8));
    }
  } else {
    CheckCount(proto.int32_data(), "int32_data", n);
    for (int64_t i = 0; i < n; ++i)
      out[i].x = static_cast<uint16_t>(proto.int32_data(static_cast<int>(i)));
  }
}

// Decodes n elements of `type` from proto's data fields into CPU memory at dst. The field follows
// from the element type (spec §1.2): float, double, int32 and int64 have their own; strings go in
// string_data; float16 in int32_data or, packed, byte_data; BYTE in byte_data; every other type of
// the table (bool, int8, uint8, int16, uint16) widened to int32_data.
void DecodeElements(const TensorProto& proto, DataType type, int64_t n, void* dst) {
  if (type == DataType::BYTE) {
    C2_ENFORCE(static_cast<int64_t>(proto.byte_data().size()) == n, "TensorProto has ",
               proto.byte_data().size(), " bytes of byte_data but its segment needs ", n);
    if (n > 0) std::memcpy(dst, proto.byte_data().data(), static_cast<size_t>(n));
    return;
  }
  VisitDataType(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float>) {
      CopyOut<float>(proto.float_data(), "float_data", n, dst);
    } else if constexpr (std::is_same_v<T, double>) {
      CopyOut<double>(proto.double_data(), "double_data", n, dst);
    } else if constexpr (std::is_same_v<T, int32_t>) {
      CopyOut<int32_t>(proto.int32_data(), "int32_data", n, dst);
    } else if constexpr (std::is_same_v<T, int64_t>) {
      CopyOut<int64_t>(proto.int64_data(), "int64_data", n, dst);
    } else if constexpr (std::is_same_v<T, float16>) {
      DecodeFloat16(proto, n, dst);
    } else if constexpr (std::is_same_v<T, std::string>) {
      CheckCount(proto.string_data(), "string_data", n);
      auto* out = static_cast<std::string*>(dst);
      for (int64_t i = 0; i < n; ++i) out[i] = proto.string_data(static_cast<int>(i));
    } else {
      NarrowFromInt32<T>(proto, n, dst);
    }
  });
}

template <class T, class Field>
void CopyIn(const void* src, int64_t n, Field* field) {
  field->Resize(static_cast<int>(n), T());
  if (n > 0) std::memcpy(field->mutable_data(), src, static_cast<size_t>(n) * sizeof(T));
}

template <class T>
void WidenToInt32(const void* src, int64_t n, TensorProto* proto) {
  auto* field = proto->mutable_int32_data();
  field->Reserve(static_cast<int>(n));
  const T* in = static_cast<const T*>(src);
  for (int64_t i = 0; i < n; ++i) field->AddAlreadyReserved(static_cast<int32_t>(in[i]));
}

void EncodeFloat16(const void* src, int64_t n, TensorProto* proto) {
  if (!FLAGS_caffe2_serialize_fp16_as_bytes) return WidenToInt32<uint16_t>(src, n, proto);
  const auto* in = static_cast<const float16*>(src);
  std::string bytes(static_cast<size_t>(2 * n), '\0');
  for (int64_t i = 0; i < n; ++i) {
    bytes[2 * i] = static_cast<char>(in[i].x & 0xff);
    bytes[2 * i + 1] = static_cast<char>(in[i].x >> 8);
  }
  proto->set_byte_data(std::move(bytes));
}

// Encodes n elements of `type` into the data field that DecodeElements reads for it.
void EncodeElements(const void* src, DataType type, int64_t n, TensorProto* proto) {
  VisitDataType(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float>) {
      CopyIn<float>(src, n, proto->mutable_float_data());
    } else if constexpr (std::is_same_v<T, double>) {
      CopyIn<double>(src, n, proto->mutable_double_data());
    } else if constexpr (std::is_same_v<T, int32_t>) {
      CopyIn<int32_t>(src, n, proto->mutable_int32_data());
    } else if constexpr (std::is_same_v<T, int64_t>) {
      CopyIn<int64_t>(src, n, proto->mutable_int64_data());
    } else if constexpr (std::is_same_v<T, float16>) {
      EncodeFloat16(src, n, proto);
    } else if constexpr (std::is_same_v<T, std::string>) {
      const auto* in = static_cast<const std::string*>(src);
      auto* field = proto->mutable_string_data();
      field->Reserve(static_cast<int>(n));
      for (int64_t i = 0; i < n; ++i) field->Add()->assign(in[i]);
    } else {
      WidenToInt32<T>(src, n, proto);
    }
  });
}

}  // namespace

void SerializeTensor(const Tensor& tensor, const std::string& name, int64_t begin, int64_t end,
                     TensorProto* proto) {
  C2_ENFORCE(tensor.initialized(), "the tensor was never resized (uninitialized)");
  C2_ENFORCE(0 <= begin && begin <= end && end <= tensor.numel(), "segment (", begin, ", ", end,
             ") out of range for ", tensor.numel(), " elements");
  proto->Clear();
  proto->set_name(name);
  for (int64_t d : tensor.dims()) proto->add_dims(d);
  proto->mutable_segment()->set_begin(begin);
  proto->mutable_segment()->set_end(end);
  const Device device = tensor.device();
  if (device.type != kCPU) {
    proto->mutable_device_detail()->set_device_type(device.type);
    proto->mutable_device_detail()->set_cuda_gpu_id(device.id);
  }
  if (!tensor.meta().initialized()) {
    C2_ENFORCE(tensor.numel() == 0, "the tensor ", tensor.DebugString(),
               " has elements but no element type");
    proto->set_data_type(TensorProto::UNDEFINED);
    return;
  }
  const DataType type = tensor.dtype();
  proto->set_data_type(static_cast<TensorProto::DataType>(type));
  const int64_t n = end - begin;
  if (n == 0) return;
  C2_ENFORCE(n <= INT32_MAX, "a chunk of ", n, " elements is too large for one TensorProto; ",
             "serialize with a smaller chunk size");
  const size_t itemsize = tensor.itemsize();
  const auto* base = static_cast<const char*>(tensor.raw_data()) + begin * itemsize;
  if (device.type == kCPU) return EncodeElements(base, type, n, proto);
  C2_ENFORCE(tensor.meta().copy == nullptr, "tensors of ", tensor.meta().name,
             " can only be serialized from the CPU");
  std::unique_ptr<char[]> host(new char[n * itemsize]);
  CopyBytes(n * itemsize, base, device, host.get(), Device{});
  EncodeElements(host.get(), type, n, proto);
}

void DeserializeTensor(const TensorProto& proto, Tensor* tensor) {
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  const int64_t numel = CheckedNumel(dims);
  int64_t begin = 0, end = numel;
  if (proto.has_segment()) {
    begin = proto.segment().begin();
    end = proto.segment().end();
    C2_ENFORCE(0 <= begin && begin <= end && end <= numel, "segment (", begin, ", ", end,
               ") out of range for dims ", Tensor::DimsString(dims), " (", numel, " elements)");
  }
  tensor->Resize(dims);
  const int raw_type = static_cast<int>(proto.data_type());
  if (raw_type == static_cast<int>(DataType::UNDEFINED)) {
    C2_ENFORCE(numel == 0, "TensorProto of data_type UNDEFINED (nested blobs) with ", numel,
               " elements is not supported");
    return;
  }
  const bool known = (raw_type >= 1 && raw_type <= 10) || raw_type == 12 || raw_type == 13;
  C2_ENFORCE(known, "unknown TensorProto data_type ", raw_type);
  const auto type = static_cast<DataType>(raw_type);
  const TypeMeta& meta = TypeMeta::FromDataType(type);
  const Device device = tensor->device();
  C2_ENFORCE(device.type == kCPU || meta.copy == nullptr, "a tensor of ", meta.name,
             " cannot be placed on ", DeviceString(device), "; only on the CPU");
  auto* base = static_cast<char*>(tensor->raw_mutable_data(meta));
  const int64_t n = end - begin;
  if (n == 0) return;
  char* dst = base + begin * meta.itemsize;
  if (device.type == kCPU) return DecodeElements(proto, type, n, dst);
  std::unique_ptr<char[]> host(new char[n * meta.itemsize]);
  DecodeElements(proto, type, n, host.get());
  CopyBytes(n * meta.itemsize, host.get(), Device{}, dst, device);
}

}  // namespace caffe2
