# Third-party libraries, all from Debian packages (see scripts/install_deps.sh).
find_package(Threads REQUIRED)
find_package(Protobuf REQUIRED)

set(C2_PRIVATE_LIBS)

# Eigen for dense CPU math.
find_package(Eigen3 REQUIRED NO_MODULE)
list(APPEND C2_PRIVATE_LIBS Eigen3::Eigen)

# glog (Debian libgoogle-glog-dev) prints the C++ log lines (core/logging.h).
find_package(glog CONFIG REQUIRED)
list(APPEND C2_PRIVATE_LIBS glog::glog)

# LMDB and LevelDB back the DB interface.
find_path(LMDB_INCLUDE_DIR lmdb.h REQUIRED)
# zlib: the CRC-32 of the minidb integrity records.
find_package(ZLIB REQUIRED)
list(APPEND C2_PRIVATE_LIBS ZLIB::ZLIB)

find_library(LMDB_LIBRARY lmdb REQUIRED)
find_path(LEVELDB_INCLUDE_DIR leveldb/db.h REQUIRED)
find_library(LEVELDB_LIBRARY leveldb REQUIRED)
list(APPEND C2_PRIVATE_LIBS ${LMDB_LIBRARY} ${LEVELDB_LIBRARY})

# OpenCV decodes and resizes images for ImageInput (only the modules it needs).
find_package(OpenCV REQUIRED COMPONENTS core imgproc imgcodecs)
list(APPEND C2_PRIVATE_LIBS opencv_core opencv_imgproc opencv_imgcodecs)

# OpenMP runs ParallelFor's chunks on a persistent thread pool (the one oneDNN uses); without it
# ParallelFor starts threads per call.
find_package(OpenMP COMPONENTS CXX)

# oneDNN (Debian libdnnl-dev) runs the CPU convolutions and GEMMs when found; without it the
# DNNL engines are not registered and the ops run their default kernels (im2col + Eigen GEMM).
set(C2_DNNL_ENABLED OFF)
if(C2_USE_DNNL)
  find_path(DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
  find_library(DNNL_LIBRARY dnnl)
  if(DNNL_INCLUDE_DIR AND DNNL_LIBRARY)
    set(C2_DNNL_ENABLED ON)
  else()
    message(STATUS "oneDNN not found (install libdnnl-dev): CPU convolutions use im2col + Eigen")
  endif()
endif()

if(C2_BUILD_PYTHON)
  find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module NumPy)
  find_package(pybind11 CONFIG REQUIRED)
endif()

if(C2_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()

# CUDA backend: AUTO builds it when nvcc, the toolkit and cuDNN are all found.
set(C2_CUDA_ENABLED OFF)
set(C2_NCCL_ENABLED OFF)
if(NOT C2_USE_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    find_path(CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    find_library(CUDNN_LIBRARY cudnn
      HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib ${CUDAToolkit_LIBRARY_ROOT}/lib64)
  endif()
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND AND CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY)
    set(C2_CUDA_ENABLED ON)
    set(CMAKE_CUDA_ARCHITECTURES ${C2_CUDA_ARCHS})
    set(CMAKE_CUDA_STANDARD 17)
    enable_language(CUDA)
  elseif(C2_USE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "C2_USE_CUDA=ON but nvcc, the CUDA toolkit or cuDNN was not found")
  endif()
endif()

# NCCL (header and library of the CUDA toolkit, or $NCCL_ROOT): the NCCL operators and the
# NCCL engine of the communication ops. Without it distributed/nccl/no_nccl.cc makes the NCCL*
# operators report that this build has no NCCL.
if(C2_CUDA_ENABLED AND C2_USE_NCCL)
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS $ENV{NCCL_ROOT}/include ${CUDAToolkit_INCLUDE_DIRS})
  find_library(NCCL_LIBRARY nccl
    HINTS $ENV{NCCL_ROOT}/lib ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib
          ${CUDAToolkit_LIBRARY_ROOT}/lib64)
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" NCCL_VERSION_LINES
         REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) [0-9]+")
    string(REGEX REPLACE ".*NCCL_MAJOR ([0-9]+).*NCCL_MINOR ([0-9]+).*NCCL_PATCH ([0-9]+).*"
           "\\1.\\2.\\3" NCCL_VERSION "${NCCL_VERSION_LINES}")
    if(NCCL_VERSION VERSION_LESS 2.14)
      message(WARNING "NCCL ${NCCL_VERSION} is older than 2.14 (non-blocking communicators): "
                      "building without NCCL")
    else()
      set(C2_NCCL_ENABLED ON)
    endif()
  else()
    message(WARNING "C2_USE_NCCL is ON but nccl.h or libnccl was not found in the CUDA toolkit "
                    "(set NCCL_ROOT): building without NCCL")
  endif()
endif()

# Where the CUDA targets look for the toolkit's, cuDNN's and NCCL's libraries at run time: beside
# themselves ($ORIGIN: libcaffe2) and in the system folders they were found in (which the dynamic
# linker may not search, e.g. /usr/local/cuda/lib64).
if(C2_CUDA_ENABLED)
  set(C2_CUDA_RUNPATH "$ORIGIN" ${CUDAToolkit_LIBRARY_DIR})
  foreach(found_library ${CUDNN_LIBRARY} ${NCCL_LIBRARY})
    get_filename_component(found_dir "${found_library}" DIRECTORY)
    list(APPEND C2_CUDA_RUNPATH "${found_dir}")
  endforeach()
  list(REMOVE_DUPLICATES C2_CUDA_RUNPATH)
endif()
