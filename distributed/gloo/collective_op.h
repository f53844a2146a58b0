// The shared frame of the Gloo operators (ops spec §3.5).
//
// - Input 0 is a common world blob (CommonWorldPtr, from CreateCommonWorld / CloneCommonWorld).
// - `status_blob` (string, ""): when set, the blob is created with the op; a failure on the wire
//   writes an int32 tensor [1] into it. Success never writes it.
// - A failure on the wire (gloo::IoException) is explained by ExplainFailure (which peer is gone)
//   and thrown as GlooIoError (Python: gloo.python.IoError) whether or not a status blob is set;
//   upstream returns false when it is, which Python also sees as a RuntimeError.
// - Pointer stability: collectives build their Gloo algorithm on the first run from the buffers'
//   addresses, sizes and dtype; later runs must present the same ones (BufferSignature), because
//   every rank's algorithm is matched to its peers' and cannot be rebuilt on one rank alone.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/operator.h"
#include "distributed/op_helpers.h"
#include "distributed/gloo/common_world.h"

#include <gloo/types.h>

namespace gloo {
class Algorithm;
}

namespace caffe2 {

// What a collective was built for: buffer addresses, element count and dtype.
struct BufferSignature {
  std::vector<const void*> pointers;
  int64_t count = 0;
  DataType dtype = DataType::UNDEFINED;
  const void* world = nullptr;

  bool operator==(const BufferSignature& o) const {
    return pointers == o.pointers && count == o.count && dtype == o.dtype && world == o.world;
  }
  std::string Describe() const;
};


// The first `n` buffer addresses of a signature as T* (Gloo's algorithms take typed pointers).
template <typename T>
std::vector<T*> TypedPointers(const BufferSignature& sig, size_t n) {
  std::vector<T*> out;
  for (size_t i = 0; i < n && i < sig.pointers.size(); ++i) {
    out.push_back(static_cast<T*>(const_cast<void*>(sig.pointers[i])));
  }
  return out;
}

// Calls make(T{}) with T the C++ type Gloo uses for `dtype` (float, gloo::float16, int32, int64).
template <typename Make>
auto DispatchGlooType(DataType dtype, Make&& make) {
  switch (dtype) {
    case DataType::FLOAT: return make(float{});
    case DataType::FLOAT16: return make(gloo::float16{});
    case DataType::INT32: return make(int32_t{});
    default: return make(int64_t{});
  }
}

class GlooOpBase : public OperatorBase {
 public:
  GlooOpBase(const OperatorDef& def, Workspace* ws);

 protected:
  bool RunOnDevice() final;
  // The collective itself; gloo::IoException escaping it becomes a GlooIoError.
  virtual void RunCollective() = 0;

  CommonWorld& World();
  CommonWorldPtr WorldPtr();
  // "<Type> '<op name or first output>'", for messages.
  std::string What() const;
  // The signature of inputs [first, first + n) (all of one dtype and size, else an error).
  BufferSignature SignatureOf(int first, int n, const std::vector<DataType>& allowed);
  // Keeps `algorithm` for `signature`, or checks that nothing changed since it was built.
  bool AlreadyBuiltFor(const BufferSignature& signature);
  void Keep(const BufferSignature& signature, std::unique_ptr<gloo::Algorithm> algorithm);
  gloo::Algorithm& algorithm() { return *algorithm_; }

 private:
  std::string status_blob_;
  BufferSignature built_for_;
  std::unique_ptr<gloo::Algorithm> algorithm_;
};

}  // namespace caffe2
