// Distributed: the store timeout surfaces as caffe2.distributed.python.StoreHandlerTimeoutError, a
// RuntimeError subclass (ops spec §3.1). Operators rethrow every error as EnforceNotMet with their
// "[OpType] " prefix, so a store timeout is recognised by its message as well as by its C++ type.
#include "distributed/store/store_handler.h"
#include "python/src/bindings.h"

namespace caffe2 {
namespace python {

void init_distributed(py::module& m) {
  static py::exception<StoreHandlerTimeoutException> timeout_error(m, "StoreHandlerTimeoutError",
                                                                   PyExc_RuntimeError);
  timeout_error.attr("__module__") = "caffe2.distributed.python";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StoreHandlerTimeoutException& e) {
      timeout_error(e.what());
    } catch (const EnforceNotMet& e) {
      if (std::string(e.what()).find(kStoreTimeoutMessagePrefix) == std::string::npos) throw;
      timeout_error(e.what());
    }
  });
}

}  // namespace python
}  // namespace caffe2
