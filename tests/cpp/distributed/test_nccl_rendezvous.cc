// The store half of a multi-process NCCL communicator (distributed/nccl/nccl_rendezvous.h): real
// processes (fork) exchanging rank 0's ncclUniqueId through a file store in a temporary
// directory. ncclGetUniqueId needs no GPU, so all of this runs on any machine.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "distributed/nccl/nccl_rendezvous.h"
#include "distributed/store/file_store_handler.h"

namespace caffe2 {
namespace {

using std::chrono::milliseconds;

std::string TempDir() {
  char name[] = "/tmp/c2_nccl_rendezvous_XXXXXX";
  const char* dir = mkdtemp(name);
  EXPECT_NE(dir, nullptr);
  return dir ? dir : "/tmp";
}

std::string Hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

NcclMember Member(const std::string& host, std::vector<std::string> gpus) {
  NcclMember m;
  m.host = host;
  m.pid = getpid();
  m.gpus = std::move(gpus);
  return m;
}

// A child process running `body`; it reports "ok\n<result>" or "error\n<message>" through a pipe.
struct Child {
  pid_t pid = -1;
  int fd = -1;
};

Child Spawn(const std::function<std::string()>& body) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string out;
    int code = 0;
    try {
      out = "ok\n" + body();
    } catch (const std::exception& e) {
      out = std::string("error\n") + e.what();
      code = 1;
    }
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fds[1]);
    _exit(code);
  }
  close(fds[1]);
  return Child{pid, fds[0]};
}

std::string Finish(const Child& child) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(child.fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  close(child.fd);
  int status = 0;
  waitpid(child.pid, &status, 0);
  return out;
}

// Each of `size` processes joins world "cw" with `gpus_of(rank)` and reports
// "<hex unique id>\n<pid of rank 0>,<pid of rank 1>,...".
std::vector<std::string> RunRanks(const std::string& dir, int size,
                                  const std::function<NcclMember(int)>& member_of,
                                  milliseconds timeout = milliseconds(20000)) {
  std::vector<Child> children;
  for (int rank = 0; rank < size; ++rank) {
    children.push_back(Spawn([=]() {
      FileStoreHandler store(dir, "run");
      const NcclRendezvousResult result =
          NcclRendezvous(store, "cw", rank, size, member_of(rank), timeout);
      std::string pids;
      for (const NcclMember& m : result.members) {
        pids += (pids.empty() ? "" : ",") + std::to_string(m.pid);
      }
      return Hex(result.unique_id) + "\n" + pids;
    }));
  }
  std::vector<std::string> outs;
  for (const Child& child : children) outs.push_back(Finish(child));
  return outs;
}

}  // namespace

TEST(NcclRendezvous, ProcessesShareRankZerosUniqueId) {
  const std::string dir = TempDir();
  const std::vector<std::string> outs = RunRanks(
      dir, 3, [](int rank) { return Member("host", {"0000:0" + std::to_string(rank) + ":00.0"}); });
  std::string id;
  std::string pids;
  for (const std::string& out : outs) {
    ASSERT_EQ(out.rfind("ok\n", 0), 0u) << out;
    const std::string body = out.substr(3);
    const std::string this_id = body.substr(0, body.find('\n'));
    const std::string these_pids = body.substr(body.find('\n') + 1);
    if (id.empty()) {
      id = this_id;
      pids = these_pids;
    }
    EXPECT_EQ(this_id, id) << "every rank must get rank 0's unique id";
    EXPECT_EQ(these_pids, pids) << "every rank must see the same members";
  }
  EXPECT_EQ(id.size(), 2u * 128u);  // NCCL_UNIQUE_ID_BYTES, hex
  EXPECT_NE(id, std::string(id.size(), '0'));
  EXPECT_EQ(std::count(pids.begin(), pids.end(), ','), 2);
}

TEST(NcclRendezvous, TwoWorldsOfOneRunGetTheirOwnIds) {
  const std::string dir = TempDir();
  auto ids = [&](const std::string& name) {
    std::vector<Child> children;
    for (int rank = 0; rank < 2; ++rank) {
      children.push_back(Spawn([=]() {
        FileStoreHandler store(dir, "run");
        return Hex(NcclRendezvous(store, name, rank, 2,
                                  Member("host", {"gpu" + std::to_string(rank)}),
                                  milliseconds(20000))
                       .unique_id);
      }));
    }
    std::vector<std::string> out;
    for (const Child& c : children) out.push_back(Finish(c));
    return out;
  };
  const auto first = ids("allreduce_0_cw_op");
  const auto second = ids("broadcast_0_cw_op");
  ASSERT_EQ(first[0].rfind("ok\n", 0), 0u) << first[0];
  ASSERT_EQ(second[0].rfind("ok\n", 0), 0u) << second[0];
  EXPECT_EQ(first[0], first[1]);
  EXPECT_EQ(second[0], second[1]);
  EXPECT_NE(first[0], second[0]);
}

TEST(NcclRendezvous, MissingRanksAreNamedOnTimeout) {
  FileStoreHandler store(TempDir(), "run");
  try {
    NcclRendezvous(store, "cw", 1, 3, Member("host", {"gpu1"}), milliseconds(1000));
    FAIL() << "expected a timeout";
  } catch (const StoreHandlerTimeoutException& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(kStoreTimeoutMessagePrefix, 0), 0u) << msg;
    EXPECT_NE(msg.find("NCCL rendezvous 'cw': rank(s) 0, 2 of 3 never arrived"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("this is rank 1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--run_id"), std::string::npos) << msg;
  }
}

TEST(NcclRendezvous, DuplicateShardIdIsRefused) {
  FileStoreHandler store(TempDir(), "run");
  NcclMember other = Member("elsewhere", {"gpu0"});
  other.pid = 4242;
  ASSERT_TRUE(store.setIfAbsent("cw/nccl/member/1", other.Encode()));
  try {
    NcclRendezvous(store, "cw", 1, 2, Member("here", {"gpu0"}), milliseconds(1000));
    FAIL() << "expected an error";
  } catch (const StoreHandlerTimeoutException& e) {
    FAIL() << "a duplicate claim must not wait: " << e.what();
  } catch (const EnforceNotMet& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("rank 1 is claimed twice: by host 'elsewhere', pid 4242"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("--shard_id"), std::string::npos) << msg;
  }
}

TEST(NcclRendezvous, JoiningTwiceFromOneProcessIsRefused) {
  FileStoreHandler store(TempDir(), "run");
  const NcclMember me = Member("here", {"gpu0"});
  ASSERT_TRUE(store.setIfAbsent("cw/nccl/member/0", me.Encode()));
  try {
    NcclRendezvous(store, "cw", 0, 2, me, milliseconds(1000));
    FAIL() << "expected an error";
  } catch (const StoreHandlerTimeoutException& e) {
    FAIL() << "a second join must not wait: " << e.what();
  } catch (const EnforceNotMet& e) {
    EXPECT_NE(std::string(e.what()).find("this process already joined it as rank 0"),
              std::string::npos)
        << e.what();
  }
}

TEST(NcclRendezvous, DifferentGpuCountsAreRefusedEverywhere) {
  const std::string dir = TempDir();
  const auto outs = RunRanks(dir, 2, [](int rank) {
    return rank == 0 ? Member("host", {"a"}) : Member("host", {"b", "c"});
  });
  for (const std::string& out : outs) {
    ASSERT_EQ(out.rfind("error\n", 0), 0u) << out;
    EXPECT_NE(out.find("rank 1 (host 'host', pid "), std::string::npos) << out;
    EXPECT_NE(out.find("brings 2 GPU(s) but rank 0"), std::string::npos) << out;
    EXPECT_NE(out.find("same number of GPUs"), std::string::npos) << out;
  }
}

TEST(NcclRendezvous, OneGpuForTwoRanksOfAHostIsRefused) {
  const std::string dir = TempDir();
  const auto outs = RunRanks(dir, 2, [](int) { return Member("host", {"0000:65:00.0"}); });
  for (const std::string& out : outs) {
    ASSERT_EQ(out.rfind("error\n", 0), 0u) << out;
    EXPECT_NE(out.find("GPU 0000:65:00.0 on host 'host' is used by rank 0"), std::string::npos)
        << out;
    EXPECT_NE(out.find("and by rank 1"), std::string::npos) << out;
  }
  // The same bus id on two hosts is two GPUs.
  const auto apart = RunRanks(TempDir(), 2, [](int rank) {
    return Member("host" + std::to_string(rank), {"0000:65:00.0"});
  });
  for (const std::string& out : apart) EXPECT_EQ(out.rfind("ok\n", 0), 0u) << out;
}

TEST(NcclRendezvous, MemberRoundTrips) {
  NcclMember m = Member("node-1", {"0000:01:00.0", "0000:02:00.0"});
  m.pid = 77;
  const NcclMember back = NcclMember::Decode(m.Encode());
  EXPECT_EQ(back.host, "node-1");
  EXPECT_EQ(back.pid, 77);
  EXPECT_EQ(back.gpus, m.gpus);
  EXPECT_EQ(back.Describe(), "host 'node-1', pid 77");
}

TEST(NcclRendezvous, BadArgumentsAreErrors) {
  FileStoreHandler store(TempDir(), "run");
  EXPECT_THROW(NcclRendezvous(store, "cw", 2, 2, Member("h", {"g"}), milliseconds(100)),
               EnforceNotMet);
  EXPECT_THROW(NcclRendezvous(store, "cw", 0, 1, Member("h", {}), milliseconds(100)),
               EnforceNotMet);
}

}  // namespace caffe2
