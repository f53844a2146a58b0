#include "distributed/nccl/nccl_world.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_context.h"
#include "distributed/nccl/nccl_check.h"
#include "distributed/nccl/nccl_clique.h"
#include "distributed/nccl/nccl_error.h"
#include "distributed/nccl/nccl_rendezvous.h"

namespace caffe2 {
namespace {

constexpr std::chrono::milliseconds kDefaultTimeout = std::chrono::seconds(30);
// Poll with yields first (small collectives finish within microseconds), then with short sleeps.
constexpr std::chrono::microseconds kSpinFor{1000};
constexpr std::chrono::microseconds kPollSleep{50};
// How long a healthy world waits, when it is destroyed, for the other ranks to leave it too.
constexpr std::chrono::milliseconds kShutdownGrace = std::chrono::seconds(10);

std::string GpuList(const std::vector<int>& gpus) {
  std::string out;
  for (int g : gpus) out += (out.empty() ? "" : ", ") + std::to_string(g);
  return "[" + out + "]";
}

// The PCI bus id of `gpu` ("0000:65:00.0"), which tells GPUs apart across processes.
std::string BusId(int gpu) {
  char bus[32] = {0};
  C2_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof(bus) - 1, gpu));
  return bus;
}

}  // namespace

NcclWorld::NcclWorld(const NcclWorldOptions& options, const StoreHandlerPtr& store)
    : options_(options), store_(store), config_(NCCL_CONFIG_INITIALIZER) {
  config_.blocking = 0;
  comms_.assign(options_.gpus.size(), nullptr);
}

std::shared_ptr<NcclWorld> NcclWorld::Create(const StoreHandlerPtr& store,
                                             const NcclWorldOptions& given) {
  NcclWorldOptions options = given;
  const std::string& name = options.name;
  C2_ENFORCE(store != nullptr, "NCCL common world '", name, "' needs a store handler");
  C2_ENFORCE(options.size >= 1, "NCCL common world '", name, "': size must be >= 1, got ",
             options.size);
  C2_ENFORCE(options.rank >= 0 && options.rank < options.size, "NCCL common world '", name,
             "': rank must be in [0, size) = [0, ", options.size, "), got ", options.rank);
  C2_ENFORCE(!options.gpus.empty(), "NCCL common world '", name, "' needs at least one GPU");
  const int visible = NumCudaDevices();
  std::set<int> seen;
  for (int g : options.gpus) {
    C2_ENFORCE(g >= 0 && g < visible, "NCCL common world '", name, "': GPU ", g, " of ",
               GpuList(options.gpus), " is not one of the ", visible, " visible GPU(s)");
    C2_ENFORCE(seen.insert(g).second, "NCCL common world '", name, "': GPU ", g,
               " appears twice "
               "in ",
               GpuList(options.gpus));
  }
  if (options.timeout.count() <= 0) options.timeout = kDefaultTimeout;

  std::vector<std::string> buses;
  for (int g : options.gpus) buses.push_back(BusId(g));
  const NcclRendezvousResult rendezvous = NcclRendezvous(*store, name, options.rank, options.size,
                                                         NcclMember::Me(buses), options.timeout);
  ncclUniqueId id;
  std::memcpy(id.internal, rendezvous.unique_id.data(), sizeof(id.internal));

  std::shared_ptr<NcclWorld> world(new NcclWorld(options, store));
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  int current = 0;
  C2_CUDA_CHECK(cudaGetDevice(&current));
  C2_NCCL_CHECK(ncclGroupStart());
  ncclResult_t failure = ncclSuccess;
  int failed = 0;
  for (int i = 0; i < world->local_size() && failure == ncclSuccess; ++i) {
    failed = i;
    if (cudaSetDevice(options.gpus[i]) != cudaSuccess) {
      failure = ncclUnhandledCudaError;
      break;
    }
    const ncclResult_t r = ncclCommInitRankConfig(&world->comms_[i], world->nccl_size(), id,
                                                  world->nccl_rank(i), &world->config_);
    if (r != ncclSuccess && r != ncclInProgress) failure = r;
  }
  const ncclResult_t end = ncclGroupEnd();
  cudaSetDevice(current);
  if (failure != ncclSuccess) {
    world->AbortAndThrow(MakeString("creating the NCCL communicator of GPU ", options.gpus[failed],
                                    " for ", world->Describe(),
                                    " failed: ", NcclErrorText(failure)));
  }
  if (end != ncclSuccess && end != ncclInProgress) {
    world->AbortAndThrow(MakeString("creating the NCCL communicators of ", world->Describe(),
                                    " failed: ", NcclErrorText(end)));
  }
  world->WaitFor("creating the NCCL communicators", deadline, nullptr);
  return world;
}

std::shared_ptr<NcclWorld> NcclWorld::Clone(const std::string& name) const {
  C2_ENFORCE(aborted_.empty(), "cannot clone ", Describe(),
             ": it was aborted after a failure: ", aborted_);
  NcclWorldOptions options = options_;
  options.name = name;
  return Create(store_, options);
}

NcclWorld::~NcclWorld() {
  if (!aborted_.empty()) return;  // aborting freed the communicators
  // NCCL's orderly exit: finalize (for non-blocking communicators it runs in the background and
  // ends with a barrier of the ranks on this host, which leave the world at the same point), wait
  // for it, destroy. When that does not complete in time (a peer on this host is gone or stuck),
  // abort instead, which waits for nobody.
  bool finalized = true;
  for (ncclComm_t comm : comms_) {
    const ncclResult_t r = ncclCommFinalize(comm);
    finalized = finalized && (r == ncclSuccess || r == ncclInProgress);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::min(timeout(), kShutdownGrace);
  while (finalized) {
    bool done = true;
    for (ncclComm_t comm : comms_) {
      ncclResult_t state = ncclSuccess;
      if (ncclCommGetAsyncError(comm, &state) != ncclSuccess) state = ncclInternalError;
      if (state == ncclInProgress) done = false;
      if (state != ncclSuccess && state != ncclInProgress) finalized = false;
    }
    if (done) break;
    if (std::chrono::steady_clock::now() >= deadline) finalized = false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (ncclComm_t comm : comms_) {
    if (finalized) {
      ncclCommDestroy(comm);
    } else {
      ncclCommAbort(comm);
    }
  }
}

std::string NcclWorld::Describe() const {
  return MakeString("common world '", name(), "' (NCCL, rank ", rank(), " of ", size(), ", GPUs ",
                    GpuList(gpus()), ")");
}

void NcclWorld::AbortAndThrow(const std::string& message) {
  for (ncclComm_t& comm : comms_) {
    if (comm != nullptr) ncclCommAbort(comm);
    comm = nullptr;
  }
  aborted_ = message;
  throw NcclError(message + "; its NCCL communicators were aborted (start a new run to recover)");
}

void NcclWorld::WaitFor(const std::string& what, std::chrono::steady_clock::time_point deadline,
                        const std::vector<cudaStream_t>* streams) {
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    bool done = true;
    for (int i = 0; i < local_size(); ++i) {
      ncclResult_t state = ncclSuccess;
      const ncclResult_t queried = ncclCommGetAsyncError(comms_[i], &state);
      if (queried != ncclSuccess) state = queried;
      if (state == ncclInProgress) {
        done = false;
        continue;
      }
      if (state != ncclSuccess) {
        AbortAndThrow(MakeString(what, " failed on GPU ", gpus()[i], " of ", Describe(),
                                 ": NCCL error ", NcclErrorText(state, comms_[i]),
                                 " (a peer exited, or the network between the hosts broke)"));
      }
      if (streams == nullptr) continue;
      cudaSetDevice(gpus()[i]);
      const cudaError_t stream_state = cudaStreamQuery((*streams)[i]);
      if (stream_state == cudaErrorNotReady) {
        done = false;
      } else if (stream_state != cudaSuccess) {
        AbortAndThrow(MakeString(what, " failed on GPU ", gpus()[i], " of ", Describe(),
                                 ": CUDA error ", cudaGetErrorString(stream_state)));
      }
    }
    if (done) return;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      AbortAndThrow(MakeString(
          what, " did not finish within ", timeout().count(), " ms on ", Describe(),
          ": a peer is dead or stuck, or the processes ran different collectives (every process "
          "must run the same collectives on a world in the same order)"));
    }
    if (now - start < kSpinFor) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(kPollSleep);
    }
  }
}

void NcclWorld::Run(const std::string& what, int stream_id,
                    const std::function<ncclResult_t(int, ncclComm_t, cudaStream_t)>& enqueue) {
  std::lock_guard<std::mutex> lock(NcclLaunchMutex());
  if (!aborted_.empty()) {
    throw NcclError(MakeString(what, " on ", Describe(),
                               ": the world was aborted after an "
                               "earlier failure: ",
                               aborted_));
  }
  int current = 0;
  C2_CUDA_CHECK(cudaGetDevice(&current));
  std::vector<cudaStream_t> streams;
  for (int g : gpus()) streams.push_back(CUDAContext::Stream(g, stream_id));
  const auto deadline = std::chrono::steady_clock::now() + timeout();
  C2_NCCL_CHECK(ncclGroupStart());
  ncclResult_t failure = ncclSuccess;
  int failed = 0;
  for (int i = 0; i < local_size() && failure == ncclSuccess; ++i) {
    failed = i;
    const ncclResult_t r = enqueue(i, comms_[i], streams[i]);
    if (r != ncclSuccess && r != ncclInProgress) failure = r;
  }
  const ncclResult_t end = ncclGroupEnd();
  if (failure != ncclSuccess || (end != ncclSuccess && end != ncclInProgress)) {
    const ncclResult_t error = failure != ncclSuccess ? failure : end;
    AbortAndThrow(MakeString(what, " could not be started on GPU ", gpus()[failed], " of ",
                             Describe(), ": ", NcclErrorText(error, comms_[failed])));
  }
  WaitFor(what, deadline, &streams);
  C2_CUDA_CHECK(cudaSetDevice(current));
}

}  // namespace caffe2
