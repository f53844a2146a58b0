// The MPI rendezvous: an MpiStoreHandler whose keys live on rank 0 of MPI_COMM_WORLD, which answers
// requests from a service thread; every rank (rank 0 included) then runs the ordinary store
// rendezvous on it, so the checks of CreateCommonWorldOnStore apply under mpirun too.
//
// Protocol on a private duplicate of MPI_COMM_WORLD: a client sends [op, reply_tag, key, value]
// with tag kRequestTag to rank 0 and waits for the reply on reply_tag (unique per request, so
// several threads of one process can ask at once). Ops: set, setIfAbsent, get-if-present (one byte
// "found"
// + value), check. Waiting is client-side polling, as the other stores do.
#include "distributed/gloo/mpi_rendezvous.h"

// The C API only: Open MPI's deprecated C++ bindings would need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "core/enforce.h"

namespace caffe2 {
namespace {

constexpr int kRequestTag = 1;
enum : char { kSet = 's', kSetIfAbsent = 'n', kGet = 'g', kCheck = 'c' };

// [op][u32 reply tag][u32 key length][key][value]
std::string Pack(char op, int reply_tag, const std::string& key, const std::string& value) {
  std::string msg(1, op);
  const uint32_t tag = static_cast<uint32_t>(reply_tag), len = static_cast<uint32_t>(key.size());
  msg.append(reinterpret_cast<const char*>(&tag), 4);
  msg.append(reinterpret_cast<const char*>(&len), 4);
  return msg + key + value;
}

class MpiKeyService {
 public:
  static MpiKeyService& Get() {
    static MpiKeyService* service = new MpiKeyService();  // lives until exit (atexit stops it)
    return *service;
  }

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Runs `op` on rank 0's table and returns its reply.
  std::string Call(char op, const std::string& key, const std::string& value) {
    if (rank_ == 0) return Apply(op, key, value);
    const int tag = 2 + static_cast<int>(next_tag_++ % 1000000);
    const std::string msg = Pack(op, tag, key, value);
    C2_ENFORCE(MPI_Send(msg.data(), static_cast<int>(msg.size()), MPI_CHAR, 0, kRequestTag,
                        comm_) == MPI_SUCCESS,
               "MPI rendezvous: sending a request to rank 0 failed");
    MPI_Status status;
    C2_ENFORCE(MPI_Probe(0, tag, comm_, &status) == MPI_SUCCESS, "MPI rendezvous: no reply");
    int count = 0;
    MPI_Get_count(&status, MPI_CHAR, &count);
    std::string reply(static_cast<size_t>(count), '\0');
    MPI_Recv(&reply[0], count, MPI_CHAR, 0, tag, comm_, MPI_STATUS_IGNORE);
    return reply;
  }

 private:
  MpiKeyService() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
      C2_ENFORCE(provided == MPI_THREAD_MULTIPLE,
                 "MPI rendezvous needs an MPI library with "
                 "MPI_THREAD_MULTIPLE support (got level ",
                 provided, ")");
      std::atexit([] { Get().Stop(); });
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    // Errors come back as codes (and so as exceptions), never as a job abort.
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    if (rank_ == 0) server_ = std::thread([this] { Serve(); });
  }

  void Stop() {
    stop_ = true;
    if (server_.joinable()) server_.join();
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }

  std::string Apply(char op, const std::string& key, const std::string& value) {
    std::lock_guard<std::mutex> guard(mutex_);
    auto it = table_.find(key);
    switch (op) {
      case kSet:
        table_[key] = value;
        return "1";
      case kSetIfAbsent:
        if (it != table_.end()) return "0";
        table_[key] = value;
        return "1";
      case kGet:
        return it == table_.end() ? std::string("0") : "1" + it->second;
      default:
        return it == table_.end() ? "0" : "1";
    }
  }

  void Serve() {
    while (!stop_) {
      int pending = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, kRequestTag, comm_, &pending, &status);
      if (!pending) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        continue;
      }
      int count = 0;
      MPI_Get_count(&status, MPI_CHAR, &count);
      std::string msg(static_cast<size_t>(count), '\0');
      MPI_Recv(&msg[0], count, MPI_CHAR, status.MPI_SOURCE, kRequestTag, comm_, MPI_STATUS_IGNORE);
      if (msg.size() < 9) continue;
      uint32_t tag = 0, len = 0;
      std::memcpy(&tag, msg.data() + 1, 4);
      std::memcpy(&len, msg.data() + 5, 4);
      if (9 + static_cast<size_t>(len) > msg.size()) continue;
      const std::string reply = Apply(msg[0], msg.substr(9, len), msg.substr(9 + len));
      MPI_Send(reply.data(), static_cast<int>(reply.size()), MPI_CHAR, status.MPI_SOURCE,
               static_cast<int>(tag), comm_);
    }
  }

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> next_tag_{0};
  std::thread server_;
  std::mutex mutex_;
  std::map<std::string, std::string> table_;
};

class MpiStoreHandler final : public StoreHandler {
 public:
  explicit MpiStoreHandler(std::string prefix) : prefix_(std::move(prefix)) {}

  void set(const std::string& name, const std::string& data) override {
    Service().Call(kSet, prefix_ + name, data);
  }
  bool setIfAbsent(const std::string& name, const std::string& data) override {
    return Service().Call(kSetIfAbsent, prefix_ + name, data) == "1";
  }
  std::string get(const std::string& name, std::chrono::milliseconds timeout) override {
    wait({name}, timeout);
    const std::string reply = Service().Call(kGet, prefix_ + name, "");
    C2_ENFORCE(!reply.empty() && reply[0] == '1', "MPI rendezvous: key '", name, "' vanished");
    return reply.substr(1);
  }
  int64_t add(const std::string& name, int64_t value) override {
    C2_THROW("MPI rendezvous store: add is not supported (key '", name, "')");
  }
  bool check(const std::vector<std::string>& names) override {
    for (const std::string& n : names) {
      if (Service().Call(kCheck, prefix_ + n, "") != "1") return false;
    }
    return true;
  }
  void wait(const std::vector<std::string>& names, std::chrono::milliseconds timeout) override {
    PollUntilPresent(names, timeout);
  }

 private:
  static MpiKeyService& Service() { return MpiKeyService::Get(); }
  std::string prefix_;
};

}  // namespace

CommonWorldPtr CreateCommonWorldWithMpi(const CommonWorldOptions& options) {
  MpiKeyService& service = MpiKeyService::Get();
  C2_ENFORCE(options.size <= 0 || options.size == service.size(), "rendezvous '", options.name,
             "': size ", options.size, " given, but MPI_COMM_WORLD has ", service.size(),
             " ranks (leave size unset under mpirun)");
  CommonWorldOptions mpi_options = options;
  mpi_options.rank = service.rank();
  mpi_options.size = service.size();
  static std::atomic<int> worlds{0};
  // Every rank makes its MPI worlds in the same order, so the counter names them alike.
  auto store = std::make_shared<MpiStoreHandler>("mpi/" + std::to_string(worlds++) + "/");
  return CreateCommonWorldOnStore(store, mpi_options);
}

}  // namespace caffe2
