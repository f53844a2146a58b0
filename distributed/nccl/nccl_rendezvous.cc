#include "distributed/nccl/nccl_rendezvous.h"

#include <nccl.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <map>
#include <sstream>

#include "core/enforce.h"
#include "distributed/nccl/nccl_check.h"

namespace caffe2 {
namespace {

std::string MemberKey(const std::string& name, int rank) {
  return name + "/nccl/member/" + std::to_string(rank);
}

std::string UniqueIdKey(const std::string& name) { return name + "/nccl/unique_id"; }

std::string ToHex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string FromHex(const std::string& hex, const std::string& what) {
  C2_ENFORCE(hex.size() == 2 * sizeof(ncclUniqueId), what, " holds ", hex.size(),
             " characters, not the ", 2 * sizeof(ncclUniqueId), " hex digits of an NCCL unique id");
  auto value = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    C2_THROW(what, " is not hex (found '", c, "')");
  };
  std::string out(hex.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<char>(value(hex[2 * i]) * 16 + value(hex[2 * i + 1]));
  }
  return out;
}

std::string JoinRanks(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out;
}

[[noreturn]] void ThrowClaimed(const std::string& name, int rank, const NcclMember& me,
                               const NcclMember& other) {
  if (other.host == me.host && other.pid == me.pid) {
    C2_THROW("NCCL rendezvous '", name, "': this process already joined it as rank ", rank,
             " (every common world needs a name of its own within a run id)");
  }
  C2_THROW("NCCL rendezvous '", name, "': rank ", rank, " is claimed twice: by ", other.Describe(),
           " and by this process (", me.Describe(),
           "); every shard needs its own --shard_id, "
           "and every run a fresh --run_id");
}

// Waits for every claim and the id; a timeout names the ranks that never arrived.
void WaitForEveryone(StoreHandler& store, const std::string& name, int rank, int size,
                     std::chrono::milliseconds timeout) {
  std::vector<std::string> keys;
  for (int r = 0; r < size; ++r) keys.push_back(MemberKey(name, r));
  keys.push_back(UniqueIdKey(name));
  try {
    store.wait(keys, timeout);
  } catch (const StoreHandlerTimeoutException&) {
    std::vector<int> missing;
    for (int r = 0; r < size; ++r) {
      if (!store.check({keys[r]})) missing.push_back(r);
    }
    const std::string what =
        missing.empty()
            ? std::string(
                  "rank 0 claimed its rank but never published the NCCL "
                  "unique id")
            : MakeString("rank(s) ", JoinRanks(missing), " of ", size, " never arrived");
    throw StoreHandlerTimeoutException(MakeString(
        kStoreTimeoutMessagePrefix, "NCCL rendezvous '", name, "': ", what, " within ",
        timeout.count(), " ms (this is rank ", rank,
        "). Check that every shard was started with "
        "the same --run_id, --num_shards and store (--file_store_path or --redis_host), and that "
        "those shards are running"));
  }
}

// Same number of GPUs everywhere; no GPU named twice on one host.
void CheckMembers(const std::string& name, const std::vector<NcclMember>& members) {
  for (size_t r = 1; r < members.size(); ++r) {
    C2_ENFORCE(members[r].gpus.size() == members[0].gpus.size(), "NCCL rendezvous '", name,
               "': rank ", r, " (", members[r].Describe(), ") brings ", members[r].gpus.size(),
               " GPU(s) but rank 0 (", members[0].Describe(), ") brings ", members[0].gpus.size(),
               "; every shard must use the same number of GPUs");
  }
  std::map<std::pair<std::string, std::string>, size_t> owner;  // (host, bus id) -> rank
  for (size_t r = 0; r < members.size(); ++r) {
    for (const std::string& gpu : members[r].gpus) {
      auto inserted = owner.emplace(std::make_pair(members[r].host, gpu), r);
      C2_ENFORCE(inserted.second || inserted.first->second == r, "NCCL rendezvous '", name,
                 "': GPU ", gpu, " on host '", members[r].host, "' is used by rank ",
                 inserted.first->second, " (", members[inserted.first->second].Describe(),
                 ") and by rank ", r, " (", members[r].Describe(),
                 "); NCCL needs a GPU of its "
                 "own for each rank: give the shards on one host different GPUs");
      C2_ENFORCE(inserted.second, "NCCL rendezvous '", name, "': rank ", r, " (",
                 members[r].Describe(), ") lists GPU ", gpu, " twice");
    }
  }
}

}  // namespace

std::string NcclMember::Encode() const {
  std::ostringstream os;
  os << "host=" << host << "\npid=" << pid << "\ngpus=";
  for (size_t i = 0; i < gpus.size(); ++i) os << (i ? "," : "") << gpus[i];
  os << "\n";
  return os.str();
}

NcclMember NcclMember::Decode(const std::string& text) {
  NcclMember m;
  std::istringstream is(text);
  std::string line;
  while (std::getline(is, line)) {
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "host") m.host = value;
    if (key == "pid") m.pid = std::atoll(value.c_str());
    if (key == "gpus") {
      std::istringstream list(value);
      std::string gpu;
      while (std::getline(list, gpu, ',')) {
        if (!gpu.empty()) m.gpus.push_back(gpu);
      }
    }
  }
  return m;
}

std::string NcclMember::Describe() const { return MakeString("host '", host, "', pid ", pid); }

NcclMember NcclMember::Me(const std::vector<std::string>& gpus) {
  NcclMember me;
  const char* forced = std::getenv("C2_RENDEZVOUS_HOSTNAME");
  if (forced != nullptr && *forced != '\0') {
    me.host = forced;
  } else {
    char buf[HOST_NAME_MAX + 1] = {0};
    me.host = gethostname(buf, sizeof(buf) - 1) == 0 ? buf : "?";
  }
  me.pid = getpid();
  me.gpus = gpus;
  return me;
}

NcclRendezvousResult NcclRendezvous(StoreHandler& store, const std::string& name, int rank,
                                    int size, const NcclMember& me,
                                    std::chrono::milliseconds timeout) {
  C2_ENFORCE(size >= 1, "NCCL rendezvous '", name, "': size must be >= 1, got ", size);
  C2_ENFORCE(rank >= 0 && rank < size, "NCCL rendezvous '", name,
             "': rank must be in [0, size) = "
             "[0, ",
             size, "), got ", rank);
  C2_ENFORCE(!me.gpus.empty(), "NCCL rendezvous '", name, "': this process brings no GPU");
  const std::string claim = MemberKey(name, rank);
  if (!store.setIfAbsent(claim, me.Encode())) {
    ThrowClaimed(name, rank, me, NcclMember::Decode(store.get(claim, timeout)));
  }
  if (rank == 0) {
    ncclUniqueId id;
    C2_NCCL_CHECK(ncclGetUniqueId(&id));
    const std::string bytes(id.internal, sizeof(id.internal));
    C2_ENFORCE(store.setIfAbsent(UniqueIdKey(name), ToHex(bytes)), "NCCL rendezvous '", name,
               "': the store already holds a unique id for it (a reused run id?); give every run "
               "a fresh --run_id");
  }
  WaitForEveryone(store, name, rank, size, timeout);

  NcclRendezvousResult result;
  for (int r = 0; r < size; ++r) {
    result.members.push_back(NcclMember::Decode(store.get(MemberKey(name, r), timeout)));
  }
  CheckMembers(name, result.members);
  result.unique_id = FromHex(store.get(UniqueIdKey(name), timeout),
                             "NCCL rendezvous '" + name + "': the unique id in the store");
  return result;
}

}  // namespace caffe2
