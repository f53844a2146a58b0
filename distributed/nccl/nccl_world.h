// NcclWorld: a multi-process NCCL communicator, the common world of the NCCL engine (beyond
// upstream, whose NCCL ops were single-process; distributed/README.md). Built with NCCL.
//
// A world joins `size` processes ("shards"), each bringing the same number G of local GPUs; NCCL
// rank shard * G + i is local GPU gpus[i], so the world has size * G NCCL ranks and one
// communicator per local GPU. Create runs the store rendezvous of nccl_rendezvous.h under the
// world's name (rank 0's unique id travels through the store, file or Redis, exactly where the
// Gloo rendezvous keeps its keys), then every process calls ncclCommInitRankConfig for each of
// its GPUs inside one group.
//
// Timeouts and dead peers: every communicator is non-blocking (ncclConfig_t.blocking = 0), so no
// NCCL call waits on a peer. Setup and each collective poll ncclCommGetAsyncError (and, for a
// collective, cudaStreamQuery of the GPUs' streams) until done, an NCCL error, or `timeout`
// (default 30 s) - then every communicator of the world is aborted (ncclCommAbort, which also
// stops its kernels still queued on the GPUs) and an NcclError names what failed, the world, this
// rank and the timeout. An aborted world refuses later collectives with the same reason; a new
// run id and a new rendezvous are needed. A healthy world is finalized and destroyed when its last
// holder lets go (DestroyCommonWorld, or the workspace going away); NCCL makes the ranks on one
// host leave together, so every process should let go of its worlds at the same point (as
// data_parallel_model's processes do at exit). If they have not within min(timeout, 10 s), the
// world is aborted instead.
//
// A clone (CloneCommonWorld) is a new world with the same shard, size, GPUs, timeout and store,
// rendezvoused under its own name; every process must clone in the same order with the same
// names, as data_parallel_model does.
//
// Collectives run one at a time per process: Run holds NcclLaunchMutex (nccl_clique.h), which the
// single-process NCCL* ops hold too, from the launch until the streams are done. NCCL
// communicators are not thread-safe, and NCCL kernels of different communicators that overlap on
// a GPU can deadlock. So every process must run the collectives of its worlds in one order:
// data_parallel_model uses a single NCCL world for its gradient all-reduces, chained by control
// inputs, and another one only in param_init_net.
#pragma once

#include <nccl.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "distributed/store/store_handler.h"

namespace caffe2 {

struct NcclWorldOptions {
  std::string name;       // rendezvous namespace (the CreateCommonWorld op's name)
  int rank = 0;           // this process's shard
  int size = 0;           // number of processes
  std::vector<int> gpus;  // this process's GPUs, one NCCL rank each
  std::chrono::milliseconds timeout{30000};
};

class NcclWorld {
 public:
  static std::shared_ptr<NcclWorld> Create(const StoreHandlerPtr& store,
                                           const NcclWorldOptions& options);
  // A new world like this one under `name` (see the header comment).
  std::shared_ptr<NcclWorld> Clone(const std::string& name) const;
  ~NcclWorld();
  NcclWorld(const NcclWorld&) = delete;
  NcclWorld& operator=(const NcclWorld&) = delete;

  const std::string& name() const { return options_.name; }
  int rank() const { return options_.rank; }
  int size() const { return options_.size; }
  const std::vector<int>& gpus() const { return options_.gpus; }
  int local_size() const { return static_cast<int>(options_.gpus.size()); }
  int nccl_rank(int local) const { return options_.rank * local_size() + local; }
  int nccl_size() const { return options_.size * local_size(); }
  std::chrono::milliseconds timeout() const { return options_.timeout; }
  // "common world 'name' (NCCL rank 1 of 2, GPUs [1])", for messages.
  std::string Describe() const;

  // One collective `what` (e.g. "Allreduce 'w_grad'"): calls enqueue(i, comm, stream) for every
  // local GPU i inside one ncclGroupStart/End, on the stream (gpus[i], stream_id), then waits until
  // every stream is done. An NCCL error, a failing stream or the timeout aborts the world and
  // throws NcclError. `enqueue` must not throw.
  void Run(const std::string& what, int stream_id,
           const std::function<ncclResult_t(int, ncclComm_t, cudaStream_t)>& enqueue);

 private:
  NcclWorld(const NcclWorldOptions& options, const StoreHandlerPtr& store);
  // Polls until every communicator leaves ncclInProgress (and, with `streams`, every stream is
  // done); on an error or at `deadline` aborts the world and throws NcclError about `what`.
  void WaitFor(const std::string& what, std::chrono::steady_clock::time_point deadline,
               const std::vector<cudaStream_t>* streams);
  [[noreturn]] void AbortAndThrow(const std::string& message);

  NcclWorldOptions options_;
  StoreHandlerPtr store_;
  ncclConfig_t config_;  // kept alive: non-blocking initialisation may read it after the call
  std::vector<ncclComm_t> comms_;  // comms_[i] on gpus[i]
  std::string aborted_;            // why the world was aborted; empty while healthy
};

using NcclWorldPtr = std::shared_ptr<NcclWorld>;

}  // namespace caffe2
