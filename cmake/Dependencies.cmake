# Third-party libraries, all from Debian packages (see scripts/install_deps.sh).
find_package(Threads REQUIRED)
find_package(Protobuf REQUIRED)

set(C2_PRIVATE_LIBS)

# LMDB and LevelDB back the DB interface.
find_path(LMDB_INCLUDE_DIR lmdb.h REQUIRED)
find_library(LMDB_LIBRARY lmdb REQUIRED)
find_path(LEVELDB_INCLUDE_DIR leveldb/db.h REQUIRED)
find_library(LEVELDB_LIBRARY leveldb REQUIRED)
list(APPEND C2_PRIVATE_LIBS ${LMDB_LIBRARY} ${LEVELDB_LIBRARY})

if(C2_BUILD_PYTHON)
  find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module NumPy)
  find_package(pybind11 CONFIG REQUIRED)
endif()

if(C2_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
