// The process's Gloo transport device: one per process, made by the first common world (ops spec
// §3.5: the first op's transport and interface win; a later op asking for another one gets the
// first, with a warning).
#pragma once

#include <memory>
#include <string>

namespace gloo {
namespace transport {
class Device;
}
}  // namespace gloo

namespace caffe2 {

struct TransportDevice {
  std::shared_ptr<gloo::transport::Device> device;
  std::string transport;  // "tcp" or "ibverbs"
  std::string interface;  // as asked for ("" = the address the host name resolves to)
  std::string address;    // the IP the pairs listen on (tcp), or the ibverbs device name
};

// transport: "tcp" or "ibverbs"; anything else is an error naming the choices.
const TransportDevice& GetTransportDevice(const std::string& transport,
                                          const std::string& interface);

// True for 127.0.0.0/8 and ::1.
bool IsLoopbackAddress(const std::string& ip);

}  // namespace caffe2
