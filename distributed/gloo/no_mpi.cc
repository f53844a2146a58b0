// Chosen by CMake when the build has no Open MPI: the MPI rendezvous reports that.
#include "core/enforce.h"
#include "distributed/gloo/mpi_rendezvous.h"

namespace caffe2 {

CommonWorldPtr CreateCommonWorldWithMpi(const CommonWorldOptions& options) {
  C2_THROW("rendezvous '", options.name,
           "': mpi_rendezvous=1 needs a build with Open MPI "
           "(install libopenmpi-dev and configure with -DC2_USE_MPI=ON); without it, rendezvous "
           "through a store (--file_store_path or --redis_host)");
}

}  // namespace caffe2
