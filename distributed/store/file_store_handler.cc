#include "distributed/store/file_store_handler.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "core/enforce.h"

namespace caffe2 {
namespace {

inline uint64_t Rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

inline uint64_t FinalMix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

inline uint64_t LoadLE64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// MurmurHash3, x64 128-bit variant (Austin Appleby's public-domain algorithm).
void Murmur3x64_128(const std::string& s, uint32_t seed, unsigned char out[16]) {
  const auto* data = reinterpret_cast<const unsigned char*>(s.data());
  const size_t len = s.size();
  const uint64_t c1 = 0x87c37b91114253d5ULL, c2 = 0x4cf5ad432745937fULL;
  uint64_t h1 = seed, h2 = seed;
  const size_t nblocks = len / 16;
  for (size_t i = 0; i < nblocks; ++i) {
    uint64_t k1 = LoadLE64(data + 16 * i), k2 = LoadLE64(data + 16 * i + 8);
    k1 *= c1;
    k1 = Rotl64(k1, 31);
    k1 *= c2;
    h1 ^= k1;
    h1 = Rotl64(h1, 27);
    h1 += h2;
    h1 = h1 * 5 + 0x52dce729;
    k2 *= c2;
    k2 = Rotl64(k2, 33);
    k2 *= c1;
    h2 ^= k2;
    h2 = Rotl64(h2, 31);
    h2 += h1;
    h2 = h2 * 5 + 0x38495ab5;
  }
  const unsigned char* tail = data + nblocks * 16;
  const size_t rest = len & 15;
  uint64_t k1 = 0, k2 = 0;
  for (size_t i = rest; i > 8; --i) k2 ^= uint64_t(tail[i - 1]) << (8 * (i - 9));
  if (rest > 8) {
    k2 *= c2;
    k2 = Rotl64(k2, 33);
    k2 *= c1;
    h2 ^= k2;
  }
  for (size_t i = rest < 8 ? rest : 8; i > 0; --i) k1 ^= uint64_t(tail[i - 1]) << (8 * (i - 1));
  if (rest > 0) {
    k1 *= c1;
    k1 = Rotl64(k1, 31);
    k1 *= c2;
    h1 ^= k1;
  }
  h1 ^= len;
  h2 ^= len;
  h1 += h2;
  h2 += h1;
  h1 = FinalMix64(h1);
  h2 = FinalMix64(h2);
  h1 += h2;
  h2 += h1;
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<unsigned char>(h1 >> (8 * i));
    out[8 + i] = static_cast<unsigned char>(h2 >> (8 * i));
  }
}

std::string ErrnoText(int err) { return std::strerror(err); }

constexpr const char* kRunIdFile = ".c2_run_id";

}  // namespace

std::string EncodeStoreName(const std::string& name) {
  unsigned char hash[16];
  Murmur3x64_128(name, 0xcafef00du, hash);
  std::string out;
  char buf[3];
  for (unsigned char b : hash) {
    if (b >= 0x80) {
      out += "ff";  // upstream prints the sign-extended char and keeps its first two digits
    } else {
      std::snprintf(buf, sizeof(buf), "%02x", b);
      out += buf;
    }
  }
  return out;
}

FileStoreHandler::FileStoreHandler(const std::string& path, const std::string& prefix) {
  C2_ENFORCE(!path.empty(), "FileStoreHandler needs a store directory: argument 'path' is empty");
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) == nullptr) {
    C2_THROW("FileStoreHandler: the store directory '", path,
             "' cannot be used: ", ErrnoText(errno),
             " (create it, on a file system every peer sees, before the run)");
  }
  struct stat st;
  C2_ENFORCE(stat(resolved, &st) == 0 && S_ISDIR(st.st_mode), "FileStoreHandler: the store path '",
             path, "' is not a directory");
  root_ = resolved;
  base_ = root_;
  if (!prefix.empty()) {
    base_ += "/" + EncodeStoreName(prefix);
    if (mkdir(base_.c_str(), 0777) != 0 && errno != EEXIST) {
      C2_THROW("FileStoreHandler: cannot create the run directory '", base_, "' for prefix '",
               prefix, "': ", ErrnoText(errno));
    }
    const std::string marker = base_ + "/" + kRunIdFile;
    if (access(marker.c_str(), F_OK) != 0) {
      const std::string tmp = WriteTemporary(kRunIdFile, prefix);
      if (rename(tmp.c_str(), marker.c_str()) != 0) unlink(tmp.c_str());
    }
  }
}

std::vector<std::pair<std::string, std::string>> FileStoreHandler::OtherNamespacesHolding(
    const std::string& name) {
  std::vector<std::pair<std::string, std::string>> out;
  if (base_ == root_) return out;
  DIR* dir = opendir(root_.c_str());
  if (dir == nullptr) return out;
  const std::string object = EncodeStoreName(name);
  while (struct dirent* entry = readdir(dir)) {
    const std::string sibling = root_ + "/" + entry->d_name;
    if (entry->d_name[0] == '.' || sibling == base_) continue;
    if (access((sibling + "/" + object).c_str(), F_OK) != 0) continue;
    std::ifstream id_file(sibling + "/" + kRunIdFile);
    std::string run_id((std::istreambuf_iterator<char>(id_file)), std::istreambuf_iterator<char>());
    std::ifstream value_file(sibling + "/" + object, std::ios::binary);
    std::string value((std::istreambuf_iterator<char>(value_file)),
                      std::istreambuf_iterator<char>());
    out.emplace_back(run_id.empty() ? "<unknown, directory " + sibling + ">" : run_id, value);
  }
  closedir(dir);
  return out;
}

std::string FileStoreHandler::ObjectPath(const std::string& name) const {
  return base_ + "/" + EncodeStoreName(name);
}

std::string FileStoreHandler::WriteTemporary(const std::string& name, const std::string& data) {
  static std::atomic<uint64_t> counter{0};
  // Hidden and unique per writer, so concurrent writers of one key never share a temporary file.
  const std::string tmp = base_ + "/." + EncodeStoreName(name) + "." + std::to_string(getpid()) +
                          "." + std::to_string(counter++);
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
  C2_ENFORCE(fd >= 0, "FileStoreHandler: cannot create '", tmp, "' for key '", name,
             "': ", ErrnoText(errno));
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      unlink(tmp.c_str());
      C2_THROW("FileStoreHandler: writing key '", name, "' to '", tmp,
               "' failed: ", ErrnoText(err));
    }
    done += static_cast<size_t>(n);
  }
  C2_ENFORCE(close(fd) == 0, "FileStoreHandler: closing '", tmp, "' failed: ", ErrnoText(errno));
  return tmp;
}

bool FileStoreHandler::setIfAbsent(const std::string& name, const std::string& data) {
  const std::string tmp = WriteTemporary(name, data);
  const std::string dst = ObjectPath(name);
  const int rc = link(tmp.c_str(), dst.c_str());
  const int err = errno;
  unlink(tmp.c_str());
  if (rc == 0) return true;
  C2_ENFORCE(err == EEXIST, "FileStoreHandler: linking '", tmp, "' to '", dst, "' (key '", name,
             "') failed: ", ErrnoText(err));
  return false;
}

void FileStoreHandler::WriteAtomically(const std::string& name, const std::string& data) {
  const std::string tmp = WriteTemporary(name, data);
  const std::string dst = ObjectPath(name);
  if (rename(tmp.c_str(), dst.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    C2_THROW("FileStoreHandler: renaming '", tmp, "' to '", dst, "' (key '", name,
             "') failed: ", ErrnoText(err));
  }
}

std::string FileStoreHandler::ReadFile(const std::string& name) const {
  const std::string path = ObjectPath(name);
  std::ifstream in(path, std::ios::binary);
  C2_ENFORCE(in.good(), "FileStoreHandler: cannot open '", path, "' for key '", name,
             "': ", ErrnoText(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void FileStoreHandler::set(const std::string& name, const std::string& data) {
  WriteAtomically(name, data);
}

std::string FileStoreHandler::get(const std::string& name, std::chrono::milliseconds timeout) {
  wait({name}, timeout);
  return ReadFile(name);
}

int64_t FileStoreHandler::add(const std::string& name, int64_t value) {
  std::lock_guard<std::mutex> guard(add_mutex_);
  const std::string lock_path = base_ + "/.lock";
  int fd = open(lock_path.c_str(), O_RDWR | O_CREAT, 0666);
  C2_ENFORCE(fd >= 0, "FileStoreHandler: cannot open the lock file '", lock_path,
             "': ", ErrnoText(errno));
  while (flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      int err = errno;
      close(fd);
      C2_THROW("FileStoreHandler: cannot lock '", lock_path, "': ", ErrnoText(err));
    }
  }
  int64_t result = 0;
  try {
    int64_t current = 0;
    if (check({name})) {
      const std::string text = ReadFile(name);
      char* end = nullptr;
      errno = 0;
      long long parsed = std::strtoll(text.c_str(), &end, 10);
      C2_ENFORCE(!text.empty() && errno == 0 && end == text.c_str() + text.size(),
                 "FileStoreHandler: add on key '", name,
                 "' which holds a value that is not a counter (", text.size(), " bytes)");
      current = parsed;
    }
    result = current + value;
    if (value != 0 || !check({name})) WriteAtomically(name, std::to_string(result));
  } catch (...) {
    flock(fd, LOCK_UN);
    close(fd);
    throw;
  }
  flock(fd, LOCK_UN);
  close(fd);
  return result;
}

bool FileStoreHandler::check(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    const std::string path = ObjectPath(name);
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) {
      if (errno == ENOENT) return false;
      C2_THROW("FileStoreHandler: cannot open '", path, "' for key '", name,
               "': ", ErrnoText(errno));
    }
    close(fd);
  }
  return true;
}

void FileStoreHandler::wait(const std::vector<std::string>& names,
                            std::chrono::milliseconds timeout) {
  PollUntilPresent(names, timeout);
}

}  // namespace caffe2
