// CommonWorld: a Gloo context joined by every rank of a run, as a blob holds it (ops spec §3.5).
//
// CreateCommonWorldOnStore runs the rendezvous through a StoreHandler under the namespace `name`
// (the CreateCommonWorld op's name):
//   1. each rank claims "<name>/member/<rank>" with setIfAbsent, storing who it is (MemberInfo);
//      a claim that exists already is a duplicate shard id or a reused run id, and the error says
//      which (same host and the claimant's pid is gone: reused run id);
//   2. it waits for every member's claim; a timeout names the ranks that never arrived (and the
//      run id a missing rank joined under instead, when the store can tell);
//   3. it checks the members against each other (a rank advertising a loopback address while
//      another rank runs on a different host);
//   4. Gloo's full-mesh connect, with keys "<name>/<rank>" as upstream (PrefixStore scheme), then a
//      barrier, so that the rendezvous ends on every rank only once every pair works.
// CloneCommonWorld makes a new context with the same rank, size and timeout whose addresses travel
// over the existing context (no store traffic).
//
// When a collective fails, ExplainFailure closes the world's connections (so peers blocked on this
// rank fail at once instead of after their timeout), publishes "<name>/failure/<rank>" and waits a
// short while for the other ranks' reports: a rank that reports nothing is dead or stuck, and the
// message names it with its host and pid.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "distributed/store/store_handler.h"

namespace gloo {
class Context;
}

namespace caffe2 {

// Who a rank is, as it announces itself at rendezvous.
struct MemberInfo {
  std::string host;  // gethostname(), or $C2_RENDEZVOUS_HOSTNAME when set
  int64_t pid = 0;
  std::string address;     // the IP its Gloo pairs listen on
  int64_t start_time = 0;  // seconds since the epoch, when it claimed its rank
  int64_t world_size = 0;  // the size it joined with (0: not recorded)

  std::string Encode() const;
  static MemberInfo Decode(const std::string& text);
  std::string Describe() const;  // "host 'h', pid 12, address 10.0.0.1"
};

struct CommonWorldOptions {
  std::string name;  // rendezvous namespace (the op's name)
  int rank = 0;
  int size = 0;
  std::string transport = "tcp";
  std::string interface;                  // "" picks the address gethostname() resolves to
  std::chrono::milliseconds timeout{-1};  // < 0: Gloo's default (30 s)
  bool sync = false;                      // synchronous pairs (no busy polling)
};

struct CommonWorld {
  CommonWorld() = default;
  ~CommonWorld();  // CloseGracefully
  CommonWorld(const CommonWorld&) = delete;
  CommonWorld& operator=(const CommonWorld&) = delete;

  std::shared_ptr<gloo::Context> context;
  std::string name;
  StoreHandlerPtr store;            // null for clones of an MPI world; used to report failures
  std::vector<MemberInfo> members;  // indexed by rank; empty when unknown
  std::vector<std::string> peer_addresses;  // "[ip]:port" each rank's pairs listen on, by rank
  bool closed = false;

  int rank() const;
  int size() const;
  std::chrono::milliseconds timeout() const;
  // "rank 1 (host 'h', pid 12)" or "rank 1" when the member is unknown.
  std::string DescribeRank(int rank) const;
  // The rank whose listening address appears in a Gloo error message, or -1.
  int RankInMessage(const std::string& message) const;
};

using CommonWorldPtr = std::shared_ptr<CommonWorld>;

CommonWorldPtr CreateCommonWorldOnStore(const StoreHandlerPtr& store,
                                        const CommonWorldOptions& options);
CommonWorldPtr CloneCommonWorld(const CommonWorld& existing, const std::string& name, bool sync);

// Closes the world's connections once every other rank closes it too (or has exited, or a grace of
// at most 5 s has passed), so that no rank resets a connection a slower peer still reads from:
// Gloo's allreduce ends by sending its peers notifications for the next run, which a closed socket
// never reads, and closing a socket with unread data resets the connection. Used by
// DestroyCommonWorld and the world's destructor (a process exiting after its last collective).
void CloseGracefully(CommonWorld& world);

// Whether the process of `member` is known to have exited (or to be a zombie): only answerable for
// members on this host; false for the others.
bool ProcessIsGone(const MemberInfo& member);

// Called by a failed collective `what` (e.g. "Allreduce 'w_grad'") with Gloo's message: closes the
// world, exchanges failure reports through the store and returns a message naming the ranks that
// are gone (failure_report.cc). The exchange takes at most 5 s (or the world's timeout if shorter),
// even when the store itself is unreachable.
std::string ExplainFailure(CommonWorld& world, const std::string& what,
                           const std::string& gloo_message);

}  // namespace caffe2
