#include <google/protobuf/io/coded_stream.h>

#include "python/src/bindings.h"

namespace caffe2 {
namespace python {

bool ParseProtoBytes(const std::string& bytes, google::protobuf::MessageLite* proto) {
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                static_cast<int>(bytes.size()));
  stream.SetTotalBytesLimit(1 << 30);
  return proto->ParseFromCodedStream(&stream) && stream.ConsumedEntireMessage();
}

}  // namespace python
}  // namespace caffe2

PYBIND11_MODULE(caffe2_pybind11_state, m) {
  namespace c2py = caffe2::python;
  m.doc() = "Caffe2-compatible runtime: workspaces, nets, operators, blobs, DBs";
  c2py::init_workspace(m);
  c2py::init_blob(m);
  c2py::init_net(m);
  c2py::init_gradient(m);
  c2py::init_schema(m);
  c2py::init_db(m);
  c2py::init_memonger(m);
  c2py::init_python_op(m);
  c2py::init_distributed(m);
}
