// CUDA kernels of MomentumSGD and MomentumSGDUpdate (float; contracts in momentum_sgd_op.cc;
// the dense update is momentum_sgd_cuda.cuh) and SparseMomentumSGDUpdate, which keeps the CPU's
// order of repeated indices (sparse_update_cuda.cuh).
#include "operators/sgd/momentum_sgd_cuda.cuh"
#include "operators/sgd/sparse_update_cuda.cuh"

namespace caffe2 {
namespace {

// SparseMomentumSGDUpdate: [grad, moment, lr, param, indices] -> [grad_out, moment, param].

struct MomentumUpdate {
  int64_t block;
  const float* g;
  const float* lr;
  float momentum;
  bool nesterov;
  float* gout;
  float* m;
  float* p;
  __device__ void operator()(int64_t row, int64_t k, int64_t j) const {
    const int64_t e = row * block + j, gi = k * block + j;
    const float rate = *lr, grad = g[gi], mi = m[e];
    float step;
    if (nesterov) {
      const float mnew = momentum * mi + rate * grad;
      step = (1 + momentum) * mnew - momentum * mi;
      m[e] = mnew;
    } else {
      step = rate * grad + momentum * mi;
      m[e] = step;
    }
    gout[gi] = step;
    p[e] = p[e] - step;
  }
  __device__ void skip(int64_t k, int64_t j) const { gout[k * block + j] = 0.f; }
};

class CudaSparseMomentumSGDUpdateOp final : public Operator<CUDAContext> {
 public:
  CudaSparseMomentumSGDUpdateOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        momentum_(GetSingleArgument<float>("momentum", 0.f)),
        nesterov_(GetSingleArgument<int>("nesterov", 0) != 0) {}

  bool RunOnDevice() override {
    const Tensor& grad = Input(0);
    const Tensor& moment = Input(1);
    const float* lr = DeviceLearningRate(Input(2), device(), &lr_on_device_);
    const Tensor& param = Input(3);
    CheckSparseMomentumInputs(grad, moment, param);
    const int64_t block = param.size_from_dim(1);
    sorted_.Sort(Input(4), param.dim(0), device(), context_.stream());
    CheckSparseGrad(grad, sorted_.count(), block);
    CheckOnDevice(grad, device(), "grad");
    CheckOnDevice(moment, device(), "moment");
    CheckOnDevice(param, device(), "param");
    Tensor* ng = Output(0);
    ng->ResizeLike(grad);
    float* m = InPlaceOutput(this, &context_, 1, "moment");
    float* p = Output(2)->mutable_data<float>();  // param, in place (enforced)
    const MomentumUpdate update{block,     grad.data<float>(),        lr, momentum_,
                                nesterov_, ng->mutable_data<float>(), m,  p};
    LaunchRuns(sorted_, block, param.dim(0), update, context_.stream());
    return true;
  }

 private:
  float momentum_;
  bool nesterov_;
  Tensor lr_on_device_;
  SortedRows sorted_;
};
}  // namespace

REGISTER_CUDA_OPERATOR(MomentumSGD, CudaMomentumSGDOp<float, false>);
REGISTER_CUDA_OPERATOR(MomentumSGDUpdate, CudaMomentumSGDOp<float, false>);
REGISTER_CUDA_OPERATOR(SparseMomentumSGDUpdate, CudaSparseMomentumSGDUpdateOp);

}  // namespace caffe2
