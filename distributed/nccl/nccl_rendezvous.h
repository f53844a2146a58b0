// The store half of a multi-process NCCL communicator (distributed/README.md): the communicator's
// unique id travels through the store the Gloo rendezvous uses, a file store or Redis. Built with
// NCCL; needs no GPU.
//
// Keys, under the world's name (the CreateCommonWorld op's name; the store adds the run id):
//   "<name>/nccl/member/<rank>"  each process's NcclMember (host, pid, the PCI bus ids of its
//                                GPUs), claimed with setIfAbsent: a claim that exists already is a
//                                duplicate shard id or a reused run id, and the error says which;
//   "<name>/nccl/unique_id"      rank 0's ncclGetUniqueId, hex encoded (rank 0's process hosts
//                                NCCL's bootstrap root, so rank 0 must be the one that makes it).
// Every process then waits, up to `timeout`, for every claim and the id; a timeout throws
// StoreHandlerTimeoutException naming the ranks that never arrived. Last, the members are checked
// against each other: every process must bring the same number of GPUs, and no GPU may be named
// by two NCCL ranks (two processes on one host given the same GPU), which NCCL would refuse
// later with a less helpful message.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "distributed/store/store_handler.h"

namespace caffe2 {

struct NcclMember {
  std::string host;  // gethostname(), or $C2_RENDEZVOUS_HOSTNAME when set
  int64_t pid = 0;
  std::vector<std::string> gpus;  // PCI bus id of each local GPU, in NCCL rank order

  std::string Encode() const;
  static NcclMember Decode(const std::string& text);
  std::string Describe() const;  // "host 'h', pid 12"
  static NcclMember Me(const std::vector<std::string>& gpus);
};

struct NcclRendezvousResult {
  std::string unique_id;            // the raw bytes of rank 0's ncclUniqueId
  std::vector<NcclMember> members;  // indexed by rank
};

// Runs the rendezvous of process `rank` of `size` as described above. Throws
// StoreHandlerTimeoutException on a timeout, EnforceNotMet on a bad claim or mismatched members.
NcclRendezvousResult NcclRendezvous(StoreHandler& store, const std::string& name, int rank,
                                    int size, const NcclMember& me,
                                    std::chrono::milliseconds timeout);

}  // namespace caffe2
