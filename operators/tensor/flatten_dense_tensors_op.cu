// CUDA registrations of FlattenDenseTensors / UnflattenDenseTensors (device-generic classes in
// flatten_dense_tensors_op.h; bytes move through the CUDA copy routines registered by core/cuda).
#include "operators/tensor/flatten_dense_tensors_op.h"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(FlattenDenseTensors, FlattenDenseTensorsOp);
REGISTER_CUDA_OPERATOR(UnflattenDenseTensors, UnflattenDenseTensorsOp);

}  // namespace caffe2
