// Distributed: the store timeout surfaces as caffe2.distributed.python.StoreHandlerTimeoutError, a
// RuntimeError subclass (ops spec §3.1). Operators and nets rethrow it with its type intact.
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
    }
  });
}

}  // namespace python
}  // namespace caffe2
