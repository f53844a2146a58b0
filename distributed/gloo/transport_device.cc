#include "distributed/gloo/transport_device.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <mutex>

#include <gloo/transport/ibverbs/device.h>
#include <gloo/transport/tcp/device.h>

#include "core/enforce.h"
#include "core/logging.h"

namespace caffe2 {
namespace {

std::string FormatIp(const sockaddr_storage& ss) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (ss.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr, buf, sizeof(buf));
  } else if (ss.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr, buf, sizeof(buf));
  } else {
    return "?";
  }
  return buf;
}

TransportDevice MakeDevice(const std::string& transport, const std::string& interface) {
  TransportDevice made;
  made.transport = transport;
  made.interface = interface;
  try {
    if (transport == "tcp") {
      gloo::transport::tcp::attr attr;
      if (!interface.empty()) attr.iface = interface;
      const gloo::transport::tcp::attr resolved = gloo::transport::tcp::CreateDeviceAttr(attr);
      made.address = FormatIp(resolved.ai_addr);
      made.device = gloo::transport::tcp::CreateDevice(resolved);
    } else if (transport == "ibverbs") {
      gloo::transport::ibverbs::attr attr;
      attr.name = interface;
      attr.port = 1;
      attr.index = 0;
      made.address = interface;
      made.device = gloo::transport::ibverbs::CreateDevice(attr);
    } else {
      C2_THROW("unknown transport '", transport, "': use 'tcp' or 'ibverbs'");
    }
  } catch (const std::exception& e) {
    C2_THROW("cannot create the Gloo ", transport, " device",
             interface.empty() ? std::string(" on the address this host's name resolves to")
                               : " on interface '" + interface + "'",
             ": ", e.what(),
             interface.empty() ? " (name a network interface with 'interface', e.g. eth0)" : "");
  }
  return made;
}

}  // namespace

const TransportDevice& GetTransportDevice(const std::string& transport,
                                          const std::string& interface) {
  static std::mutex mutex;
  static std::unique_ptr<TransportDevice> device;
  std::lock_guard<std::mutex> guard(mutex);
  if (!device) {
    device = std::make_unique<TransportDevice>(MakeDevice(transport, interface));
  } else if (device->transport != transport || device->interface != interface) {
    C2_LOG(Warning) << "Gloo: this process already uses the " << device->transport << " device on '"
                    << device->interface << "'; ignoring the request for " << transport << " on '"
                    << interface << "' (one device per process)";
  }
  return *device;
}

bool IsLoopbackAddress(const std::string& ip) { return ip.rfind("127.", 0) == 0 || ip == "::1"; }

}  // namespace caffe2
