// Single-process NCCL communicators (ops spec §3.6), built only with NCCL.
//
// A clique is one communicator per GPU of an ordered device list, NCCL rank i on devices[i]. It is
// made by ncclCommInitAll the first time the list is used and kept for the life of the process
// (never destroyed: destroying communicators while the CUDA runtime shuts down at exit is unsafe,
// and a clique is small). The same GPUs in another order are another clique.
//
// NcclLaunchMutex serialises the NCCL collectives of the process (the single-process ops and the
// multi-process worlds of nccl_world.h): each holds it from the launch of its group until its
// streams are done. NCCL communicators are not thread-safe, and collectives launched concurrently
// from several threads on overlapping GPUs can deadlock.
#pragma once

#include <nccl.h>

#include <mutex>
#include <vector>

namespace caffe2 {

struct NcclClique {
  std::vector<int> devices;
  std::vector<ncclComm_t> comms;  // comms[i] is NCCL rank i, on devices[i]
};

// The clique of `devices` (distinct GPU ids, at least 2); the caller holds NcclLaunchMutex().
const NcclClique& GetNcclClique(const std::vector<int>& devices);

std::mutex& NcclLaunchMutex();

}  // namespace caffe2
