// Distributed: the store timeout surfaces as caffe2.distributed.python.StoreHandlerTimeoutError and
// a failure on the wire of a Gloo op as gloo.python.IoError, both RuntimeError subclasses (ops spec
// §3.1, §3.5). Operators and nets rethrow them with their types intact.
#include "distributed/collective.h"
#include "distributed/store/store_handler.h"
#include "python/src/bindings.h"

namespace caffe2 {
namespace python {

void init_distributed(py::module& m) {
  static py::exception<StoreHandlerTimeoutException> timeout_error(m, "StoreHandlerTimeoutError",
                                                                   PyExc_RuntimeError);
  timeout_error.attr("__module__") = "caffe2.distributed.python";
  static py::exception<CollectiveIoError> io_error(m, "IoError", PyExc_RuntimeError);
  io_error.attr("__module__") = "gloo.python";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StoreHandlerTimeoutException& e) {
      timeout_error(e.what());
    } catch (const CollectiveIoError& e) {
      io_error(e.what());
    }
  });
}

}  // namespace python
}  // namespace caffe2
