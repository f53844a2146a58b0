// ExplainFailure (common_world.h): what a failed collective tells its user. Each rank whose
// collective fails writes a failure report to the store and waits briefly for its peers' reports;
// then every peer is one of: exited (its process is gone: same host only), reported (it failed
// too), or silent (alive as far as we know, but no report: dead, stuck, or cut off). The exchange
// runs on a helper thread so that an unreachable store (a host whose link is down cannot reach a
// Redis server either) costs the grace period and not the store's own timeout.
#include <condition_variable>
#include <mutex>
#include <sstream>
#include <thread>

#include <gloo/context.h>

#include "core/enforce.h"
#include "core/logging.h"
#include "distributed/gloo/common_world.h"

namespace caffe2 {
namespace {

// How long a failed rank waits for the other ranks' failure reports.
constexpr std::chrono::milliseconds kReportGrace = std::chrono::seconds(5);

std::string FailureKey(const std::string& name, int rank) {
  return name + "/failure/" + std::to_string(rank);
}

// What the helper thread found; shared with it, as it may outlive the wait.
struct Exchange {
  std::mutex mutex;
  std::condition_variable finished_cv;
  bool finished = false;
  std::vector<bool> reported;
  std::string store_error;  // why the store could not be used, if it could not
};

void ExchangeReports(const std::shared_ptr<Exchange>& exchange, const StoreHandlerPtr& store,
                     const std::string& name, int me, int size,
                     const std::vector<MemberInfo>& members, const std::string& report,
                     std::chrono::milliseconds grace) {
  std::vector<bool> reported(size, false);
  std::string error;
  try {
    store->setIfAbsent(FailureKey(name, me), report);
    const auto deadline = std::chrono::steady_clock::now() + grace;
    for (int missing = size - 1; missing > 0 && std::chrono::steady_clock::now() < deadline;) {
      missing = 0;
      for (int r = 0; r < size; ++r) {
        if (r == me || reported[r]) continue;
        if (static_cast<size_t>(r) < members.size() && ProcessIsGone(members[r])) continue;
        reported[r] = store->check({FailureKey(name, r)});
        if (!reported[r]) ++missing;
      }
      if (missing > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  } catch (const std::exception& e) {
    error = e.what();
  }
  std::lock_guard<std::mutex> guard(exchange->mutex);
  exchange->reported = reported;
  exchange->store_error = error;
  exchange->finished = true;
  exchange->finished_cv.notify_all();
}

// Joins "rank 1 (host 'a', pid 2), rank 3 (...)", a few at most, for big worlds.
std::string DescribeRanks(const CommonWorld& world, const std::vector<int>& ranks, int suspect) {
  constexpr size_t kShown = 8;
  std::ostringstream os;
  for (size_t i = 0; i < ranks.size() && i < kShown; ++i) {
    os << (i ? ", " : "") << world.DescribeRank(ranks[i]);
    if (ranks[i] == suspect) os << " (its connection broke)";
  }
  if (ranks.size() > kShown) os << " and " << ranks.size() - kShown << " more ranks";
  return os.str();
}

}  // namespace

std::string ExplainFailure(CommonWorld& world, const std::string& what,
                           const std::string& gloo_message) {
  const int me = world.rank(), size = world.size();
  // Peers blocked on this rank learn about the failure now rather than at their timeout.
  try {
    world.closed = true;
    world.context->closeConnections();
  } catch (const std::exception&) {
  }
  const int suspect = world.RankInMessage(gloo_message);
  const std::chrono::milliseconds grace = std::min(kReportGrace, world.timeout());

  auto exchange = std::make_shared<Exchange>();
  exchange->reported.assign(size, false);
  bool store_answered = false;
  std::string store_error = world.store ? "" : "no store to exchange reports through";
  if (world.store) {
    std::thread(ExchangeReports, exchange, world.store, world.name, me, size, world.members,
                MakeString(what, ": ", gloo_message), grace)
        .detach();
    std::unique_lock<std::mutex> lock(exchange->mutex);
    const bool finished = exchange->finished_cv.wait_for(lock, grace + std::chrono::seconds(1),
                                                         [&] { return exchange->finished; });
    if (finished) {
      store_answered = exchange->store_error.empty();
      store_error = exchange->store_error;
    } else {
      store_error = MakeString("the store did not answer within ", grace.count() / 1000, " s");
    }
  }
  if (!store_error.empty() && world.store) {
    C2_LOG(Warning) << "Gloo: could not exchange failure reports through the store: "
                    << store_error;
  }

  std::vector<int> exited, reported, silent;
  {
    std::lock_guard<std::mutex> guard(exchange->mutex);
    for (int r = 0; r < size; ++r) {
      if (r == me) continue;
      if (static_cast<size_t>(r) < world.members.size() && ProcessIsGone(world.members[r])) {
        exited.push_back(r);
      } else if (exchange->finished && exchange->reported[r]) {
        reported.push_back(r);
      } else if (store_answered || r == suspect) {
        silent.push_back(r);
      }
    }
  }

  std::ostringstream os;
  os << what << " failed on rank " << me << " of " << size << " (common world '" << world.name
     << "'): ";
  std::vector<std::string> parts;
  if (!exited.empty()) {
    parts.push_back(DescribeRanks(world, exited, suspect) +
                    (exited.size() == 1 ? " has exited" : " have exited"));
  }
  if (!silent.empty()) {
    std::string part = DescribeRanks(world, silent, suspect);
    if (store_answered) {
      part += MakeString(silent.size() == 1 ? " is" : " are",
                         " dead or stuck (no failure report within ", grace.count() / 1000, " s)");
    } else {
      part += MakeString(silent.size() == 1 ? " is" : " are", " unreachable, and so is the store (",
                         store_error, "): this host may have lost its network link");
    }
    parts.push_back(part);
  }
  if (!reported.empty()) {
    parts.push_back(DescribeRanks(world, reported, suspect) + " failed too");
  }
  if (parts.empty()) {
    parts.push_back(suspect >= 0 ? "the connection to " + world.DescribeRank(suspect) + " broke"
                                 : "no peer could be blamed (" + store_error + ")");
  }
  for (size_t i = 0; i < parts.size(); ++i) os << (i ? "; " : "") << parts[i];
  os << ". Gloo: " << gloo_message;
  return os.str();
}

}  // namespace caffe2
