// Rendezvous under mpirun: rank and size come from MPI_COMM_WORLD and the Gloo addresses travel
// through MPI collectives instead of a store (CreateCommonWorld with mpi_rendezvous=1 and no
// input). Built from mpi_rendezvous.cc with Open MPI (C2_USE_MPI), else from no_mpi.cc, which says
// so.
#pragma once

#include "distributed/gloo/common_world.h"

namespace caffe2 {

// options.rank and options.size are ignored (MPI decides); a given size must match MPI's.
CommonWorldPtr CreateCommonWorldWithMpi(const CommonWorldOptions& options);

}  // namespace caffe2
