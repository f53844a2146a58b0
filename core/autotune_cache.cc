#include "core/autotune_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "core/enforce.h"
#include "core/flags.h"
#include "core/logging.h"

C2_DEFINE_bool(
    caffe2_exhaustive_search, false,
    "Time the algorithm choices of every op that can (as its exhaustive_search argument does) "
    "instead of following the fixed rules; see --caffe2_autotune_cache.");
C2_DEFINE_string(
    caffe2_autotune_cache, "",
    "A file of timed algorithm choices: read on first use, and every new timed choice is "
    "appended, so other processes given the file make the same choices.");

namespace caffe2 {
namespace {

struct CacheState {
  std::mutex mutex;
  std::map<std::string, std::string> choices;  // this machine's, by key
  std::string loaded_path;                     // the file `choices` has read
  uint64_t generation = 0;
};

CacheState& State() {
  static auto* state = new CacheState();
  return *state;
}

std::string ReadCpuSignature() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "unknown-cpu";
  std::set<std::string> isa;
  static const std::set<std::string> kRelevant = {
      "avx",      "avx2",     "fma",         "f16c",        "avx512f",  "avx512bw",
      "avx512vl", "avx512dq", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_bf16"};
  bool have_model = false, have_flags = false;
  while (std::getline(in, line) && !(have_model && have_flags)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    name.erase(name.find_last_not_of(" \t") + 1);
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : std::string();
    if (name == "model name" && !have_model) {
      model = value;
      have_model = true;
    } else if (name == "flags" && !have_flags) {
      std::istringstream words(value);
      std::string w;
      while (words >> w) {
        if (kRelevant.count(w)) isa.insert(w);
      }
      have_flags = true;
    }
  }
  std::string sig = model;
  for (const auto& f : isa) sig += " +" + f;
  for (char& c : sig) {
    if (c == '\t' || c == '\n') c = ' ';
  }
  return sig;
}

// Reads this machine's records of `path` into state.choices (the first record of a key wins). A
// file that does not exist yet holds no records.
void LoadLocked(CacheState& s, const std::string& path) {
  s.loaded_path = path;
  std::ifstream in(path);
  if (!in) return;
  const std::string& machine = AutotuneMachine();
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto t1 = line.find('\t');
    const auto t2 = t1 == std::string::npos ? std::string::npos : line.find('\t', t1 + 1);
    if (t2 == std::string::npos) continue;  // a torn or foreign line: ignored
    if (line.compare(0, t1, machine) != 0 || t1 != machine.size()) continue;
    s.choices.emplace(line.substr(t1 + 1, t2 - t1 - 1), line.substr(t2 + 1));
  }
}

void CheckField(const std::string& s, const char* what) {
  C2_ENFORCE(s.find_first_of("\t\n") == std::string::npos, "autotune ", what, " '", s,
             "' must not hold tabs or newlines");
}

// Follows a change of --caffe2_autotune_cache: the records of the old path are dropped.
void SyncPathLocked(CacheState& s) {
  const std::string& path = FLAGS_caffe2_autotune_cache;
  if (path == s.loaded_path) return;
  s.choices.clear();
  if (!path.empty()) LoadLocked(s, path);
  s.loaded_path = path;
  ++s.generation;
}

}  // namespace

bool ExhaustiveSearchEnabled(bool op_argument) {
  return op_argument || FLAGS_caffe2_exhaustive_search;
}

const std::string& AutotuneMachine() {
  static const std::string sig = ReadCpuSignature();
  return sig;
}

uint64_t AutotuneGeneration() {
  auto& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  SyncPathLocked(s);
  return s.generation;
}

std::optional<std::string> AutotuneLookup(const std::string& key) {
  auto& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  SyncPathLocked(s);
  const std::string& path = FLAGS_caffe2_autotune_cache;
  auto it = s.choices.find(key);
  if (it == s.choices.end() && !path.empty()) {
    LoadLocked(s, path);  // another process may have tuned this case since
    it = s.choices.find(key);
  }
  if (it == s.choices.end()) return std::nullopt;
  return it->second;
}

void AutotuneRecord(const std::string& key, const std::string& choice) {
  CheckField(key, "key");
  CheckField(choice, "choice");
  auto& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  SyncPathLocked(s);
  const bool is_new = s.choices.emplace(key, choice).second;
  const std::string& path = FLAGS_caffe2_autotune_cache;
  if (!is_new || path.empty()) return;
  // One write() per record with O_APPEND: records of processes writing at once do not interleave.
  const std::string line = AutotuneMachine() + "\t" + key + "\t" + choice + "\n";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  C2_ENFORCE(fd >= 0, "Cannot open the autotune cache --caffe2_autotune_cache=", path, ": ",
             std::strerror(errno));
  const ssize_t written = ::write(fd, line.data(), line.size());
  const int write_errno = errno;
  ::close(fd);
  C2_ENFORCE(written == static_cast<ssize_t>(line.size()), "Cannot append to the autotune cache ",
             path, ": ", written < 0 ? std::strerror(write_errno) : "short write");
  C2_LOG(Info) << "autotune: " << key << " -> " << choice << " (recorded in " << path << ")";
}

void AutotuneForget() {
  auto& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.choices.clear();
  const std::string& path = FLAGS_caffe2_autotune_cache;
  if (!path.empty()) LoadLocked(s, path);
  s.loaded_path = path;
  ++s.generation;
}

}  // namespace caffe2
