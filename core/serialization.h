// Blob serialization (spec §5.11): a Blob becomes one or more serialized BlobProtos.
//
// - Tensors are written as BlobProto{name, type "Tensor", tensor} in chunks of `chunk_size`
//   elements; each chunk carries its `segment` and is handed to the acceptor under the key
//   name + "#%" + chunk index. An empty tensor gives one chunk with segment (0, 0).
//   chunk_size kDefaultChunkSize uses --caffe2_tensor_chunk_size; kNoChunking writes one chunk.
// - Element encodings follow TensorProto (spec §1.2): FLOAT float_data, DOUBLE double_data, INT64
//   int64_data, STRING string_data; INT32/BOOL/UINT8/INT8/UINT16/INT16 in int32_data; FLOAT16 as
//   raw bits in int32_data, or in byte_data (2 bytes per element, little-endian) when
//   --caffe2_serialize_fp16_as_bytes is set. BYTE is read from byte_data into uint8, never written.
//   device_detail is written only for non-CPU tensors; reading places the tensor on the device it
//   names (CPU when absent).
// - Other blob types have serializers keyed by C++ type and deserializers keyed by BlobProto.type:
//   "std::string" (content), "std::unique_ptr<std::mutex>" (content "", reads back a fresh mutex)
//   and "DBReader" (content = DBReaderProto, registered by core/db/db_reader.cc). They use the bare
//   blob name as key.
#pragma once

#include <functional>
#include <string>
#include <typeindex>

#include "caffe2/proto/caffe2.pb.h"
#include "core/blob.h"

namespace caffe2 {

constexpr int kDefaultChunkSize = -1;
constexpr int kNoChunking = 0;
// Separates a tensor's name from its chunk index in DB keys.
constexpr const char* kChunkIdSeparator = "#%";
// BlobProto.type of serialized tensors.
constexpr const char* kTensorBlobType = "Tensor";

// Receives (key, serialized BlobProto) once per chunk, in chunk order, on the calling thread.
using BlobAcceptor =
    std::function<void(const std::string& key, const std::string& serialized_blob_proto)>;

// Serializes `blob` under `name`. Throws for an empty blob, an unregistered type, or a tensor
// that has elements but no data.
void SerializeBlob(const Blob& blob, const std::string& name, const BlobAcceptor& acceptor,
                   int chunk_size = kDefaultChunkSize);
// The whole blob as one serialized BlobProto (kNoChunking).
std::string SerializeBlob(const Blob& blob, const std::string& name);

// Restores a blob from a serialized BlobProto. A tensor chunk with a segment fills only that range
// of an existing tensor of the same dims, type and device (the blob is reset otherwise). Malformed
// input throws an error naming the blob.
void DeserializeBlob(const std::string& serialized, Blob* blob);
void DeserializeBlob(const BlobProto& proto, Blob* blob);

// Tensor <-> TensorProto for the element range [begin, end).
void SerializeTensor(const Tensor& tensor, const std::string& name, int64_t begin, int64_t end,
                     TensorProto* proto);
// Reads `proto` into `tensor` (resized to proto.dims(); only the segment is written when present).
// The tensor's device is left as it is: callers choose it (see DeviceFromTensorProto).
void DeserializeTensor(const TensorProto& proto, Tensor* tensor);
// The device a TensorProto's device_detail names (CPU when absent).
Device DeviceFromTensorProto(const TensorProto& proto);

// Extension registries (spec §5.11). Registering a type twice replaces the earlier entry.
// A serializer calls the acceptor once per chunk; chunk_size has been resolved (> 0, or
// kNoChunking).
using BlobSerializerFn = std::function<void(const Blob& blob, const std::string& name,
                                            const BlobAcceptor& acceptor, int chunk_size)>;
using BlobDeserializerFn = std::function<void(const BlobProto& proto, Blob* blob)>;
// Both return true so they can initialise a static at load time.
bool RegisterBlobSerializer(std::type_index type, BlobSerializerFn fn);
bool RegisterBlobDeserializer(const std::string& type, BlobDeserializerFn fn);
bool HasBlobSerializer(std::type_index type);
bool HasBlobDeserializer(const std::string& type);

}  // namespace caffe2
