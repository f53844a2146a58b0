// The shared frame of the Gloo operators: the communication ops' frame (distributed/collective.h:
// input 0, `status_blob`, failures on the wire) with the GLOO engine's specifics.
//
// - Input 0 is a common world blob (CommonWorldPtr, from CreateCommonWorld / CloneCommonWorld).
// - A failure on the wire (gloo::IoException) is explained by ExplainFailure (which peer is gone)
//   and thrown as a CollectiveIoError.
// - Pointer stability: collectives build their Gloo algorithm on the first run from the buffers'
//   addresses, sizes and dtype; later runs must present the same ones (BufferSignature), because
//   every rank's algorithm is matched to its peers' and cannot be rebuilt on one rank alone.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/operator.h"
#include "distributed/collective.h"
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
    case DataType::FLOAT:
      return make(float{});
    case DataType::FLOAT16:
      return make(gloo::float16{});
    case DataType::INT32:
      return make(int32_t{});
    default:
      return make(int64_t{});
  }
}

class GlooOpBase : public OperatorBase, public CollectiveOp {
 public:
  GlooOpBase(const OperatorDef& def, Workspace* ws);

 protected:
  bool RunOnDevice() final { return RunReportingWireFailures(); }
  // gloo::IoException, explained, and CollectiveIoError are failures on the wire.
  std::exception_ptr WireFailure(std::exception_ptr error) final;

  CommonWorld& World();
  CommonWorldPtr WorldPtr();
  // The signature of inputs [first, first + n) (all of one dtype and size, else an error).
  BufferSignature SignatureOf(int first, int n, const std::vector<DataType>& allowed);
  // Keeps `algorithm` for `signature`, or checks that nothing changed since it was built.
  bool AlreadyBuiltFor(const BufferSignature& signature);
  void Keep(const BufferSignature& signature, std::unique_ptr<gloo::Algorithm> algorithm);
  gloo::Algorithm& algorithm() { return *algorithm_; }

 private:
  BufferSignature built_for_;
  std::unique_ptr<gloo::Algorithm> algorithm_;
};

}  // namespace caffe2
