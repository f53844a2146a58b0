// Feeding numpy arrays and strings into blobs, and fetching them back (spec §2.5).
#include <pybind11/numpy.h>

#include <cstring>

#include "caffe2/proto/caffe2.pb.h"
#include "core/allocator.h"
#include "core/context.h"
#include "python/src/bindings.h"

namespace caffe2 {
namespace python {
namespace {

// The element type of a numpy dtype: the entry of the type table (C2_FOR_EACH_DATA_TYPE,
// core/types.h) whose numpy dtype is equivalent (numpy's `long` and `longlong` are both int64), or
// std::string for bytes ('S') arrays; null for a dtype the table lacks.
const TypeMeta* NumpyToCaffe(const py::dtype& dtype) {
  if (dtype.kind() == 'S') return &TypeMeta::Make<std::string>();
#define C2_FROM_NUMPY(ID, T, NAME, NUMPY) \
  if (dtype.equal(py::dtype(NUMPY))) return &TypeMeta::Make<T>();
  C2_FOR_EACH_DATA_TYPE(C2_FROM_NUMPY)
#undef C2_FROM_NUMPY
  return nullptr;
}

std::string ToStdString(const py::handle& item) {
  if (py::isinstance<py::bytes>(item)) return item.cast<std::string>();
  if (py::isinstance<py::str>(item)) return item.cast<std::string>();
  C2_THROW("String tensors can only hold bytes or str elements, found ",
           std::string(py::str(item.get_type())));
}

}  // namespace

py::dtype NumpyDtype(DataType type) {
  C2_ENFORCE(IsElementType(type), "Cannot fetch a tensor of type ", DataTypeName(type),
             " into numpy");
  return py::dtype(NumpyDtypeName(type));
}

void NumpyToTensor(const py::object& arg, Tensor* tensor) {
  py::array array = py::array::ensure(arg, py::array::c_style);
  C2_ENFORCE(array, "Expected a numpy array");
  C2_ENFORCE(array.dtype().kind() != 'U',
             "Unicode numpy arrays are not supported for feeding; convert them to bytes or object "
             "arrays (workspace.FeedBlob does this)");
  const TypeMeta* meta = NumpyToCaffe(array.dtype());
  C2_ENFORCE(meta != nullptr,
             "This numpy data type is not supported: ", std::string(py::str(array.dtype())));
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  const int64_t n = array.size();
  if (meta->id == DataType::STRING) {
    C2_ENFORCE(tensor->device().type == kCPU, "String tensors can only be fed to the CPU");
    tensor->Resize(dims);
    std::string* out = tensor->mutable_data<std::string>();
    if (array.dtype().kind() == 'S') {
      const size_t width = array.itemsize();
      const char* base = static_cast<const char*>(array.data());
      for (int64_t i = 0; i < n; ++i) {
        const char* s = base + i * width;
        out[i].assign(s, strnlen(s, width));
      }
    } else {
      py::object flat = array.attr("ravel")();
      int64_t i = 0;
      for (auto item : flat) out[i++] = ToStdString(item);
    }
    return;
  }
  tensor->Resize(dims);
  void* dst = tensor->raw_mutable_data(*meta);
  if (n > 0) CopyBytes(n * meta->itemsize, array.data(), Device{kCPU, 0}, dst, tensor->device());
}

void FeedBlobObject(Blob* blob, const py::object& arg, const py::object& device_option) {
  DeviceOption option;
  if (!device_option.is_none()) {
    option = ParseProto<DeviceOption>(device_option.cast<std::string>(), "DeviceOption");
  }
  if (py::isinstance<py::array>(arg)) {
    C2_ENFORCE(option.device_type() == kCPU || option.device_type() == kCUDA,
               "Unknown device type encountered in FeedBlob: ", option.device_type());
    Tensor* tensor = blob->GetMutableTensor(DeviceFromOption(option));
    NumpyToTensor(arg, tensor);
    return;
  }
  if (py::isinstance<py::bytes>(arg) || py::isinstance<py::str>(arg)) {
    *blob->GetMutable<std::string>() = arg.cast<std::string>();
    return;
  }
  C2_THROW(
      "Unexpected type of argument - only numpy array or string are supported for feeding, "
      "got ",
      std::string(py::str(arg.get_type())));
}

py::object TensorToNumpy(const Tensor& src) {
  C2_ENFORCE(src.initialized(), "Trying to fetch unitilized tensor");
  Tensor host;
  const Tensor* t = &src;
  if (src.device().type != kCPU) {
    host.CopyFrom(src);
    t = &host;
  }
  if (!t->meta().initialized()) {
    // Resized but never written: an empty float array of the right shape.
    C2_ENFORCE(t->numel() == 0, "Trying to fetch a tensor that holds no data: ", t->DebugString());
    return py::array(py::dtype("float32"), t->dims());
  }
  py::dtype dtype = NumpyDtype(t->dtype());
  py::array out(dtype, t->dims());
  if (t->dtype() == DataType::STRING) {
    const std::string* data = t->data<std::string>();
    py::object flat = out.attr("reshape")(py::make_tuple(-1));
    for (int64_t i = 0; i < t->numel(); ++i) {
      flat[py::int_(i)] = py::bytes(data[i]);
    }
    return std::move(out);
  }
  if (t->numel() > 0) std::memcpy(out.mutable_data(), t->raw_data(), t->nbytes());
  return std::move(out);
}

py::object FetchBlobObject(const Blob& blob, const std::string& name, bool raise_if_unknown) {
  if (blob.IsType<Tensor>()) return TensorToNumpy(blob.Get<Tensor>());
  if (blob.IsType<std::string>()) return py::bytes(blob.Get<std::string>());
  C2_ENFORCE(!raise_if_unknown, "Blob ", name, " holds ", blob.TypeName(),
             ", which has no fetcher");
  return py::bytes(name + ", a C++ native class of type " + blob.TypeName() + ".");
}

}  // namespace python
}  // namespace caffe2
