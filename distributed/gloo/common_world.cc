#include "distributed/gloo/common_world.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include <gloo/barrier_all_to_one.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/device.h>
#include <gloo/transport/tcp/address.h>

#include "core/enforce.h"
#include "core/logging.h"
#include "distributed/collective.h"
#include "distributed/gloo/gloo_store_adapter.h"
#include "distributed/gloo/transport_device.h"

namespace caffe2 {
namespace {

constexpr std::chrono::milliseconds kGlooDefaultTimeout = std::chrono::seconds(30);
// A claim in another run id this recent (beyond the timeout) counts as a shard given the wrong id.
constexpr int64_t kMismatchWindowSeconds = 60;

std::string LocalHostName() {
  if (const char* forced = std::getenv("C2_RENDEZVOUS_HOSTNAME")) {
    if (*forced) return forced;
  }
  char buf[HOST_NAME_MAX + 1] = {0};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "?";
  return buf;
}

std::string MemberKey(const std::string& name, int rank) {
  return name + "/member/" + std::to_string(rank);
}

std::string ClosingKey(const std::string& name, int rank) {
  return name + "/closing/" + std::to_string(rank);
}

// How long a closing rank waits for the others to close too.
constexpr std::chrono::milliseconds kCloseGrace = std::chrono::seconds(5);

// "1, 2, 3", or for long lists "1, 2, ..., 9 (99999 ranks)": messages stay readable for big worlds.
std::string JoinRanks(const std::vector<int>& ranks) {
  constexpr size_t kShown = 8;
  std::string out;
  for (size_t i = 0; i < ranks.size() && i < kShown; ++i)
    out += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > kShown)
    out += MakeString(", ..., ", ranks.back(), " (", ranks.size(), " ranks)");
  return out;
}

// Every member that recorded its world size must have joined with ours.
void CheckSameSize(const std::string& name, const CommonWorldOptions& options, int r,
                   const MemberInfo& m) {
  C2_ENFORCE(m.world_size == 0 || m.world_size == options.size, "rendezvous '", name, "': rank ", r,
             " (", m.Describe(), ") joined with size ", m.world_size, ", this rank (", options.rank,
             ") has size ", options.size, ": every shard must be given the same --num_shards");
}

// True when `member` ran on this host and its process is gone (or a zombie nobody reaped yet).

[[noreturn]] void ThrowRankTaken(const std::string& name, int rank, const MemberInfo& me,
                                 const MemberInfo& other, std::chrono::milliseconds timeout) {
  const bool same_process = other.host == me.host && other.pid == me.pid;
  const bool stale =
      ProcessIsGone(other) || other.start_time + timeout.count() / 1000 + 1 < me.start_time;
  if (same_process) {
    C2_THROW("rendezvous '", name, "': this process already joined it as rank ", rank,
             " (every common world needs a name of its own within a run id)");
  }
  if (stale) {
    C2_THROW("rendezvous '", name, "': rank ", rank, " was already claimed by an earlier run (",
             other.Describe(),
             ") under the same run id and store: the run id was reused; give "
             "every run a fresh --run_id");
  }
  C2_THROW("rendezvous '", name, "': rank ", rank, " is claimed twice: by ", other.Describe(),
           " and by this process (", me.Describe(),
           "); every shard needs its own --shard_id "
           "(or the run id was reused while an earlier run is still alive)");
}

// " Rank r joined 'name' under another run id ('a', 'b'): ..." when rank r's claim shows up, made
// while we waited, in other namespaces of the store (newest first, at most 3); else "".
std::string RunIdMismatch(StoreHandler& store, const std::string& name, int rank,
                          const std::string& claim_key, std::chrono::milliseconds timeout) {
  std::vector<std::pair<int64_t, std::string>> runs;
  try {
    const int64_t since =
        static_cast<int64_t>(std::time(nullptr)) - timeout.count() / 1000 - kMismatchWindowSeconds;
    for (const auto& found : store.OtherNamespacesHolding(claim_key)) {
      const MemberInfo claim = MemberInfo::Decode(found.second);
      if (claim.start_time >= since) runs.emplace_back(claim.start_time, found.first);
    }
  } catch (const std::exception&) {
    return "";  // a diagnostic only: the timeout itself is the error
  }
  if (runs.empty()) return "";
  std::sort(runs.rbegin(), runs.rend());
  std::string ids;
  for (size_t i = 0; i < runs.size() && i < 3; ++i) {
    ids += (ids.empty() ? "'" : ", '") + runs[i].second + "'";
  }
  return MakeString(" Rank ", rank, " joined '", name, "' under another run id (", ids,
                    "): every shard must be given the same --run_id.");
}

// Waits for every member's claim; a timeout names the ranks that never arrived.
std::vector<MemberInfo> GatherMembers(StoreHandler& store, const CommonWorldOptions& options,
                                      std::chrono::milliseconds timeout) {
  std::vector<std::string> keys;
  for (int r = 0; r < options.size; ++r) keys.push_back(MemberKey(options.name, r));
  try {
    store.wait(keys, timeout);
  } catch (const StoreHandlerTimeoutException&) {
    std::vector<int> missing;
    for (int r = 0; r < options.size; ++r) {
      if (!store.check({keys[r]})) {
        missing.push_back(r);
      } else {
        CheckSameSize(options.name, options, r, MemberInfo::Decode(store.get(keys[r])));
      }
    }
    if (missing.empty()) return GatherMembers(store, options, timeout);
    std::string elsewhere;
    for (size_t i = 0; i < missing.size() && i < 3; ++i) {
      elsewhere += RunIdMismatch(store, options.name, missing[i], keys[missing[i]], timeout);
    }
    throw StoreHandlerTimeoutException(MakeString(
        kStoreTimeoutMessagePrefix, "rendezvous '", options.name, "': rank(s) ", JoinRanks(missing),
        " of ", options.size, " never arrived within ", timeout.count(), " ms (this is rank ",
        options.rank, ").", elsewhere,
        " Check that every shard was started "
        "with the same --run_id, --num_shards and store (--file_store_path or --redis_host), and "
        "that those shards are running"));
  }
  std::vector<MemberInfo> members;
  for (int r = 0; r < options.size; ++r) {
    members.push_back(MemberInfo::Decode(store.get(keys[r])));
    CheckSameSize(options.name, options, r, members.back());
  }
  // A rank that joined with a larger size claimed a key past ours: it waits for ranks that never
  // come.
  const std::string beyond = MemberKey(options.name, options.size);
  if (store.check({beyond}))
    CheckSameSize(options.name, options, options.size, MemberInfo::Decode(store.get(beyond)));
  return members;
}

// A rank that advertises a loopback address cannot be reached from another host.
void CheckReachable(const std::string& name, const std::vector<MemberInfo>& members) {
  for (size_t r = 0; r < members.size(); ++r) {
    if (!IsLoopbackAddress(members[r].address)) continue;
    for (size_t peer = 0; peer < members.size(); ++peer) {
      if (members[peer].host == members[r].host) continue;
      C2_THROW("rendezvous '", name, "': rank ", r, " (host '", members[r].host, "') listens on ",
               members[r].address, ", a loopback address, but rank ", peer,
               " runs on another host ('", members[peer].host,
               "') and cannot reach it. The host "
               "name resolves to loopback (see /etc/hosts): choose the network interface with "
               "--distributed_interfaces (the op argument 'interface'), e.g. eth0");
    }
  }
}

// "[ip]:port" of each rank's listening socket, from the addresses exchanged at rendezvous: Gloo
// stores one address per rank (its device's listener) under the key "<rank>".
std::vector<std::string> PeerAddresses(const gloo::Context& context,
                                       const GlooStoreAdapter& adapter,
                                       const std::string& transport) {
  std::vector<std::string> out(context.size);
  if (transport != "tcp") return out;
  for (const auto& kv : adapter.values_seen()) {
    char* end = nullptr;
    const long peer = std::strtol(kv.first.c_str(), &end, 10);
    if (end == kv.first.c_str() || *end != '\0' || peer < 0 || peer >= context.size) continue;
    try {
      out[peer] = gloo::transport::tcp::Address(kv.second).str();
    } catch (const std::exception&) {
    }
  }
  return out;
}

}  // namespace

bool ProcessIsGone(const MemberInfo& member) {
  if (member.host != LocalHostName() || member.pid <= 0) return false;
  if (kill(static_cast<pid_t>(member.pid), 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(member.pid) + "/stat");
  // comm is "(name)" and may hold spaces: the state is the first field after the last ')'.
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

std::string MemberInfo::Encode() const {
  std::ostringstream os;
  os << "host=" << host << "\npid=" << pid << "\naddress=" << address << "\nstart=" << start_time
     << "\nsize=" << world_size << "\n";
  return os.str();
}

MemberInfo MemberInfo::Decode(const std::string& text) {
  MemberInfo m;
  std::istringstream is(text);
  std::string line;
  while (std::getline(is, line)) {
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "host") m.host = value;
    if (key == "pid") m.pid = std::atoll(value.c_str());
    if (key == "address") m.address = value;
    if (key == "start") m.start_time = std::atoll(value.c_str());
    if (key == "size") m.world_size = std::atoll(value.c_str());
  }
  return m;
}

std::string MemberInfo::Describe() const {
  return MakeString("host '", host, "', pid ", pid, ", address ", address);
}

int CommonWorld::rank() const { return context->rank; }
int CommonWorld::size() const { return context->size; }
std::chrono::milliseconds CommonWorld::timeout() const { return context->getTimeout(); }

std::string CommonWorld::DescribeRank(int r) const {
  if (r < 0 || r >= static_cast<int>(members.size())) return "rank " + std::to_string(r);
  return MakeString("rank ", r, " (host '", members[r].host, "', pid ", members[r].pid, ")");
}

int CommonWorld::RankInMessage(const std::string& message) const {
  for (size_t r = 0; r < peer_addresses.size(); ++r) {
    if (!peer_addresses[r].empty() && message.find(peer_addresses[r]) != std::string::npos) {
      return static_cast<int>(r);
    }
  }
  // Gloo may name the connection's other port ("[ip]:ephemeral"): then the IP alone, when exactly
  // one other rank has it (ranks on one host share it).
  int found = -1;
  for (size_t r = 0; r < peer_addresses.size(); ++r) {
    const std::string& address = peer_addresses[r];
    const size_t close = address.find("]:");
    if (static_cast<int>(r) == rank() || close == std::string::npos) continue;
    if (message.find(address.substr(0, close + 2)) == std::string::npos) continue;
    if (found >= 0) return -1;
    found = static_cast<int>(r);
  }
  return found;
}

CommonWorldPtr CreateCommonWorldOnStore(const StoreHandlerPtr& store,
                                        const CommonWorldOptions& options) {
  C2_ENFORCE(store != nullptr, "rendezvous '", options.name, "' needs a store handler");
  C2_ENFORCE(options.size >= 1, "rendezvous '", options.name, "': size must be >= 1, got ",
             options.size);
  C2_ENFORCE(options.rank >= 0 && options.rank < options.size, "rendezvous '", options.name,
             "': rank must be in [0, size) = [0, ", options.size, "), got ", options.rank);
  const std::chrono::milliseconds timeout =
      options.timeout.count() > 0 ? options.timeout : kGlooDefaultTimeout;
  const TransportDevice& device = GetTransportDevice(options.transport, options.interface);

  MemberInfo me;
  me.host = LocalHostName();
  me.pid = getpid();
  me.address = device.address;
  me.start_time = static_cast<int64_t>(std::time(nullptr));
  me.world_size = options.size;
  const std::string claim = MemberKey(options.name, options.rank);
  if (!store->setIfAbsent(claim, me.Encode())) {
    ThrowRankTaken(options.name, options.rank, me, MemberInfo::Decode(store->get(claim)), timeout);
  }
  C2_LOG(Info) << "rendezvous '" << options.name << "': rank " << options.rank << " of "
               << options.size << " claimed (" << me.Describe() << "), waiting for the others";

  auto world = std::make_shared<CommonWorld>();
  world->name = options.name;
  world->store = store;
  world->members = GatherMembers(*store, options, timeout);
  CheckReachable(options.name, world->members);
  C2_LOG(Info) << "rendezvous '" << options.name << "': all " << options.size
               << " ranks arrived; connecting the pairs";

  auto context = std::make_shared<gloo::rendezvous::Context>(options.rank, options.size);
  context->setTimeout(timeout);
  GlooStoreAdapter adapter(store.get(), options.name, timeout);
  std::shared_ptr<gloo::transport::Device> dev = device.device;
  try {
    context->connectFullMesh(adapter, dev);
    // Every rank leaves the rendezvous only once all pairs work (a rank that returned and exited at
    // once could otherwise break a peer's still unfinished handshake).
    gloo::BarrierAllToOne(context, 0).run();
  } catch (const StoreHandlerTimeoutException&) {
    throw;
  } catch (const std::exception& e) {
    throw CollectiveIoError(MakeString("rendezvous '", options.name, "': rank ", options.rank,
                                       " could not connect to its peers: ", e.what()));
  }
  if (options.sync) {
    for (int r = 0; r < options.size; ++r) {
      if (r != options.rank) context->getPair(r)->setSync(true, false);
    }
  }
  world->peer_addresses = PeerAddresses(*context, adapter, device.transport);
  world->context = context;
  C2_LOG(Info) << "rendezvous '" << options.name << "': rank " << options.rank << " of "
               << options.size << " connected over " << device.transport;
  return world;
}

CommonWorldPtr CloneCommonWorld(const CommonWorld& existing, const std::string& name, bool sync) {
  C2_ENFORCE(existing.context != nullptr, "cannot clone common world '", existing.name,
             "': it was destroyed");
  gloo::rendezvous::ContextFactory factory(existing.context);
  std::shared_ptr<gloo::transport::Device> dev = existing.context->getDevice();
  auto world = std::make_shared<CommonWorld>();
  try {
    world->context = factory.makeContext(dev);
    world->context->setTimeout(existing.timeout());
    gloo::BarrierAllToOne(world->context, 0).run();
  } catch (const std::exception& e) {
    throw CollectiveIoError(MakeString("cloning common world '", existing.name, "' into '", name,
                                       "' failed on rank ", existing.rank(), ": ", e.what()));
  }
  if (sync) {
    for (int r = 0; r < world->context->size; ++r) {
      if (r != world->context->rank) world->context->getPair(r)->setSync(true, false);
    }
  }
  world->name = name;
  world->store = existing.store;
  world->members = existing.members;
  world->peer_addresses = existing.peer_addresses;  // one listening socket per device
  return world;
}

CommonWorld::~CommonWorld() {
  try {
    CloseGracefully(*this);
  } catch (...) {
  }
}

void CloseGracefully(CommonWorld& world) {
  if (!world.context || world.closed) return;
  world.closed = true;
  const int me = world.rank(), size = world.size();
  if (world.store && size > 1) {
    try {
      world.store->setIfAbsent(ClosingKey(world.name, me), "1");
      const auto deadline =
          std::chrono::steady_clock::now() + std::min(kCloseGrace, world.timeout());
      for (int r = 0; r < size; ++r) {
        if (r == me) continue;
        const bool known = static_cast<size_t>(r) < world.members.size();
        while (!world.store->check({ClosingKey(world.name, r)}) &&
               !(known && ProcessIsGone(world.members[r])) &&
               std::chrono::steady_clock::now() < deadline) {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
      }
    } catch (const std::exception& e) {
      C2_LOG(Warning) << "Gloo: closing common world '" << world.name
                      << "' without waiting for its peers: " << e.what();
    }
  }
  world.context->closeConnections();
}

}  // namespace caffe2
