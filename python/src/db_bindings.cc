// DB access from Python (spec §2.3, §2.4): Mode, DB, Cursor, Transaction, create_db,
// registered_dbs. Keys and values are bytes; put() accepts bytes or str.
#include <pybind11/stl.h>

#include "core/db/db.h"
#include "python/src/bindings.h"

namespace caffe2 {
namespace python {

void init_db(py::module& m) {
  using db::Cursor;
  using db::DB;
  using db::Transaction;
  using Release = py::call_guard<py::gil_scoped_release>;

  py::enum_<db::Mode>(m, "Mode")
      .value("read", db::READ)
      .value("write", db::WRITE)
      .value("new", db::NEW)
      .export_values();

  py::class_<Transaction>(m, "Transaction")
      .def("put", &Transaction::Put, py::arg("key"), py::arg("value"), Release())
      .def("commit", &Transaction::Commit, Release());

  py::class_<Cursor>(m, "Cursor")
      .def("supports_seek", &Cursor::SupportsSeek)
      .def("seek", &Cursor::Seek, py::arg("key"), Release())
      .def("seek_to_first", &Cursor::SeekToFirst, Release())
      .def("next", &Cursor::Next, Release())
      .def("key", [](Cursor* c) { return py::bytes(c->key()); })
      .def("value", [](Cursor* c) { return py::bytes(c->value()); })
      .def("valid", &Cursor::Valid);

  py::class_<DB>(m, "DB")
      .def("new_transaction", &DB::NewTransaction)
      .def("new_cursor", &DB::NewCursor)
      .def("close", &DB::Close, Release());

  m.def("create_db", &db::CreateDB, py::arg("db_type"), py::arg("source"), py::arg("mode"),
        "Opens a DB; None when db_type is not registered.");
  m.def("registered_dbs", &db::RegisteredDBs);
}

}  // namespace python
}  // namespace caffe2
