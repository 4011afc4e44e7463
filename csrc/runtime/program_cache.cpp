#include "program_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <future>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#ifndef TORCH_OCL_VERSION
#error "TORCH_OCL_VERSION must be defined by the build (CMake sets it from the project version)"
#endif

namespace torch_ocl::rt {

const char* const kTorchOclVersion = TORCH_OCL_VERSION;

namespace {

// ---- hashing ---------------------------------------------------------------------------------

constexpr uint64_t kMurmurM = 0xc6a4a7935bd1e995ULL;
constexpr int kMurmurR = 47;

uint64_t load64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// MurmurHash64A (Austin Appleby, public domain), reading bytes in native order.
uint64_t murmur64(const void* data, size_t len, uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = seed ^ (static_cast<uint64_t>(len) * kMurmurM);
  const size_t blocks = len / 8;
  for (size_t i = 0; i < blocks; ++i) {
    uint64_t k = load64(p + 8 * i);
    k *= kMurmurM;
    k ^= k >> kMurmurR;
    k *= kMurmurM;
    h ^= k;
    h *= kMurmurM;
  }
  const unsigned char* tail = p + 8 * blocks;
  switch (len & 7) {
    case 7:
      h ^= static_cast<uint64_t>(tail[6]) << 48;
      [[fallthrough]];
    case 6:
      h ^= static_cast<uint64_t>(tail[5]) << 40;
      [[fallthrough]];
    case 5:
      h ^= static_cast<uint64_t>(tail[4]) << 32;
      [[fallthrough]];
    case 4:
      h ^= static_cast<uint64_t>(tail[3]) << 24;
      [[fallthrough]];
    case 3:
      h ^= static_cast<uint64_t>(tail[2]) << 16;
      [[fallthrough]];
    case 2:
      h ^= static_cast<uint64_t>(tail[1]) << 8;
      [[fallthrough]];
    case 1:
      h ^= static_cast<uint64_t>(tail[0]);
      h *= kMurmurM;
  }
  h ^= h >> kMurmurR;
  h *= kMurmurM;
  h ^= h >> kMurmurR;
  return h;
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// FNV-1a 64 with a seeded basis and a final avalanche. Structurally unrelated to murmur64, so
// the two halves of a disk key collide independently.
uint64_t fnv1a64(const void* data, size_t len, uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0xcbf29ce484222325ULL ^ seed;
  for (size_t i = 0; i < len; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return splitmix64(h);
}

constexpr uint64_t kKeySeedA = 0x746f7263682d6f63ULL;      // "torch-oc"
constexpr uint64_t kKeySeedB = 0x6c2d6b65792d6232ULL;      // "l-key-b2"
constexpr uint64_t kChecksumSeed = 0x636c62696e73756dULL;  // "clbinsum"

uint64_t payloadChecksum(const std::string& payload) {
  return murmur64(payload.data(), payload.size(), kChecksumSeed);
}

// Appends a field as <decimal length>:<bytes>; so no two field lists serialise the same way.
void appendField(std::string* out, const std::string& field) {
  *out += std::to_string(field.size());
  *out += ':';
  *out += field;
}

// ---- on-disk entry format --------------------------------------------------------------------

constexpr char kMagic[8] = {'T', 'O', 'C', 'L', 'B', 'I', 'N', '1'};
constexpr uint32_t kFormatVersion = 1;

struct FileHeader {
  char magic[8];
  uint32_t format_version;
  uint32_t reserved;  // zero
  uint64_t payload_size;
  uint64_t payload_checksum;
};
static_assert(sizeof(FileHeader) == 32, "the on-disk header is 32 bytes");

// Closes a POSIX file descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { close(); }
  int get() const { return fd_; }
  bool close() {
    if (fd_ < 0) return true;
    int rc = ::close(fd_);
    fd_ = -1;
    return rc == 0;
  }

 private:
  int fd_;
};

bool writeAll(int fd, const void* data, size_t len) {
  const auto* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = ::write(fd, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

bool readAll(int fd, void* data, size_t len) {
  auto* p = static_cast<char*>(data);
  while (len > 0) {
    ssize_t n = ::read(fd, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) return false;  // shorter than announced
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

// A name no other process or thread picks at the same time: pid, a process-wide counter, the
// thread and the clock. (std::random_device may throw; this must not.)
std::string tempSuffix() {
  static std::atomic<uint64_t> counter{0};
  uint64_t r = splitmix64(
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
      (counter.fetch_add(1, std::memory_order_relaxed) << 32) ^
      static_cast<uint64_t>(std::hash<std::thread::id>()(std::this_thread::get_id())));
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(r));
  return ".tmp." + std::to_string(static_cast<long long>(::getpid())) + "." + buf;
}

// Writes header + payload to a temporary file next to `path` and renames it into place, so
// readers see either the old entry, no entry, or the complete new one. Returns false (and
// leaves nothing behind) on any IO failure; never throws for IO reasons.
bool writeEntryAtomically(const std::string& dir, const std::string& path,
                          const std::string& payload) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return false;
  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.format_version = kFormatVersion;
  h.reserved = 0;
  h.payload_size = payload.size();
  h.payload_checksum = payloadChecksum(payload);
  const std::string tmp = path + tempSuffix();
  Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (fd.get() < 0) return false;
  bool ok = writeAll(fd.get(), &h, sizeof(h)) && writeAll(fd.get(), payload.data(), payload.size());
  ok = fd.close() && ok;
  if (ok) ok = ::rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) ::unlink(tmp.c_str());
  return ok;
}

std::string envString(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// ---- OpenCL helpers --------------------------------------------------------------------------

std::string buildLog(cl_program program, cl_device_id device) {
  size_t n = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n) != CL_SUCCESS)
    return "(build log unavailable)";
  std::string log(n, '\0');
  if (n > 0 && clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, n, log.data(),
                                     nullptr) != CL_SUCCESS)
    return "(build log unavailable)";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n' || log.back() == ' '))
    log.pop_back();
  return log;
}

// The binary of a program built for exactly one device; empty when the driver has none.
std::string programBinary(cl_program program) {
  cl_uint ndev = 0;
  OCL_CHECK(clGetProgramInfo(program, CL_PROGRAM_NUM_DEVICES, sizeof(ndev), &ndev, nullptr));
  if (ndev != 1) return std::string();
  size_t size = 0;
  OCL_CHECK(clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr));
  if (size == 0) return std::string();
  std::string bin(size, '\0');
  auto* ptr = reinterpret_cast<unsigned char*>(bin.data());
  OCL_CHECK(clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(ptr), &ptr, nullptr));
  return bin;
}

struct KeyHash {
  size_t operator()(const ProgramKey& k) const noexcept {
    return static_cast<size_t>(
        splitmix64(reinterpret_cast<uintptr_t>(k.family) ^ splitmix64(k.variant)));
  }
};

// Per-thread kernels. Keyed by the program (whose address stays unique while one of our kernels
// retains it), then a short list of names (programs hold few kernels).
struct ThreadKernels {
  struct Named {
    std::string name;
    Kernel kernel;
  };
  std::unordered_map<cl_program, std::vector<Named>> by_program;
  ThreadKernels() = default;
  ThreadKernels(const ThreadKernels&) = delete;
  ThreadKernels& operator=(const ThreadKernels&) = delete;
  // Releasing a kernel never throws (ClHandle::reset is noexcept); nothing else runs here.
  ~ThreadKernels() noexcept = default;
};

}  // namespace

// ---- baseBuildOptions --------------------------------------------------------------------------

std::string baseBuildOptions(const DeviceInfo& info) {
  // Same rule as Device::clStdOption: the device's OpenCL C version, capped at the versions
  // -cl-std accepts (CL1.1, CL1.2, CL2.0, CL3.0).
  std::string opts;
  const int major = info.cl_c_major, minor = info.cl_c_minor;
  if (major >= 3) {
    opts = "-cl-std=CL3.0";
  } else if (major == 2) {
    opts = "-cl-std=CL2.0";
  } else if (major == 1 && minor >= 2) {
    opts = "-cl-std=CL1.2";
  } else if (major == 1 && minor == 1) {
    opts = "-cl-std=CL1.1";
  }  // OpenCL C 1.0: no -cl-std (CL1.0 is not a valid value).
  auto add = [&opts](const char* o) {
    if (!opts.empty()) opts += ' ';
    opts += o;
  };
  if (info.fp64) add("-DTORCH_OCL_FP64=1");
  if (info.fp16) add("-DTORCH_OCL_FP16=1");
  return opts;
}

// ---- DiskCache -------------------------------------------------------------------------------

DiskCache::DiskCache(std::string dir, bool enabled, bool every_program)
    : dir_(std::move(dir)), enabled_(enabled), every_program_(every_program) {
  if (dir_.empty()) enabled_ = false;
}

DiskCache DiskCache::fromEnvironment(const DeviceInfo& info) {
  std::string dir = envString("TORCH_OCL_CACHE_DIR");
  if (dir.empty()) {
    const std::string xdg = envString("XDG_CACHE_HOME");
    if (!xdg.empty()) {
      dir = xdg + "/torch_ocl";
    } else {
      const std::string home = envString("HOME");
      if (!home.empty()) dir = home + "/.cache/torch_ocl";
    }
  }
  const std::string flag = lower(envString("TORCH_OCL_CACHE"));
  bool enabled = true, every_program = true;
  if (flag == "0" || flag == "off" || flag == "false" || flag == "no") {
    enabled = false;
  } else if (flag == "1" || flag == "on" || flag == "true" || flag == "yes") {
    enabled = true;
  } else {
    // Unset (or unrecognised): on, except where the driver keeps its own binary cache and
    // loads from it as fast as we would (NVIDIA). PoCL caches too, but a clBuildProgram from
    // source that hits its cache still costs ~50-100 ms a program (it hashes and re-links the
    // kernel library); from our binary a few ms. Making the binary costs PoCL a compile of every
    // kernel, though, which pays only for programs whose kernels all run (see
    // DiskCache::storesEveryProgram). Measured on 2 loaded cores, fresh caches then warm, first
    // compiled step, every program stored / generated ones only: small GPT cold 80-101 s /
    // 25-48 s, warm 1.5-2.8 / 2.5-3.0 s (storing none of them); mlp cold 14-22 / 7-14 s.
    const bool nvidia = info.platform_vendor.find("NVIDIA") != std::string::npos ||
                        info.platform_name.find("NVIDIA") != std::string::npos;
    enabled = !nvidia;
    every_program = info.platform_name.find("Portable Computing Language") == std::string::npos;
  }
  return DiskCache(std::move(dir), enabled, every_program);  // an empty dir disables it
}

std::string DiskCache::key(const std::string& source, const std::string& options,
                           const DeviceInfo& info) {
  std::string buf;
  buf.reserve(source.size() + options.size() + 512);
  appendField(&buf, "torch-ocl-program-key-v1");
  appendField(&buf, kTorchOclVersion);
  appendField(&buf, source);
  appendField(&buf, options);
  appendField(&buf, info.name);
  appendField(&buf, info.vendor);
  appendField(&buf, info.driver_version);
  appendField(&buf, info.device_version);
  appendField(&buf, info.opencl_c_version);
  appendField(&buf, info.platform_name);
  appendField(&buf, info.platform_vendor);
  appendField(&buf, info.platform_version);
  const uint64_t a = murmur64(buf.data(), buf.size(), kKeySeedA);
  const uint64_t b = fnv1a64(buf.data(), buf.size(), kKeySeedB);
  char hex[33];
  std::snprintf(hex, sizeof(hex), "%016llx%016llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return std::string(hex, 32);
}

std::string DiskCache::pathFor(const std::string& key) const {
  return dir_ + "/" + key + ".clbin";
}

bool DiskCache::load(const std::string& key, std::string* binary, bool* corrupt) const {
  if (corrupt) *corrupt = false;
  if (!enabled_) return false;
  const std::string path = pathFor(key);
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return false;  // a miss (or unreadable: treated as a miss)
  auto reject = [&]() {
    fd.close();
    ::unlink(path.c_str());
    if (corrupt) *corrupt = true;
    return false;
  };
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return false;
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  FileHeader h{};
  if (file_size < sizeof(h) || !readAll(fd.get(), &h, sizeof(h))) return reject();
  if (std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0 || h.format_version != kFormatVersion ||
      h.payload_size != file_size - sizeof(h))
    return reject();
  std::string payload(static_cast<size_t>(h.payload_size), '\0');
  if (!readAll(fd.get(), payload.data(), payload.size())) return reject();
  if (payloadChecksum(payload) != h.payload_checksum) return reject();
  if (binary) *binary = std::move(payload);
  return true;
}

void DiskCache::store(const std::string& key, const std::string& binary) const {
  if (!enabled_) return;
  writeEntryAtomically(dir_, pathFor(key), binary);  // best effort
}

// ---- ProgramCache ----------------------------------------------------------------------------

struct ProgramCache::Impl {
  struct Entry {
    std::shared_future<Program> future;
    cl_program program = nullptr;  // set, under mutex, once the build has been published
  };

  Impl(Device& d, DiskCache dc) : dev(d), disk(std::move(dc)) {}

  // Builds one program; counts into `delta` (merged into stats by the caller, success or not).
  Program build(const ProgramSource& src, ProgramCacheStats* delta);
  Program fromBinary(const std::string& binary, const std::string& options);

  Device& dev;
  DiskCache disk;
  mutable std::mutex mutex;
  std::unordered_map<ProgramKey, Entry, KeyHash> entries;
  std::unordered_map<cl_program, std::string> names;  // for the profiler
  ProgramCacheStats stats;
  std::atomic<int64_t> fast_hits{0};  // memory hits served by the per-thread table
};

namespace {

std::atomic<uint64_t> g_next_cache_id{1};

// Per-thread, direct-mapped table of published programs: (cache id, key) -> program. Programs
// live as long as their cache, and ids are never reused, so a stale entry can only miss.
struct FastEntry {
  uint64_t cache = 0;
  const void* family = nullptr;
  uint64_t variant = 0;
  cl_program program = nullptr;
};
constexpr size_t kFastEntries = 512;
thread_local FastEntry t_fast[kFastEntries];

inline size_t fastSlot(uint64_t cache, const ProgramKey& key) {
  uint64_t h = reinterpret_cast<uintptr_t>(key.family) * 0x9e3779b97f4a7c15ULL;
  h ^= (key.variant + cache) * 0xc2b2ae3d27d4eb4fULL;
  h ^= h >> 29;
  return static_cast<size_t>(h) & (kFastEntries - 1);
}

}  // namespace

Program ProgramCache::Impl::fromBinary(const std::string& binary, const std::string& options) {
  cl_device_id id = dev.id();
  const size_t len = binary.size();
  const auto* ptr = reinterpret_cast<const unsigned char*>(binary.data());
  cl_int status = CL_SUCCESS, err = CL_SUCCESS;
  Program p(clCreateProgramWithBinary(dev.context(), 1, &id, &len, &ptr, &status, &err));
  if (err != CL_SUCCESS || status != CL_SUCCESS || !p) return Program();
  if (clBuildProgram(p.get(), 1, &id, options.c_str(), nullptr, nullptr) != CL_SUCCESS)
    return Program();
  return p;
}

Program ProgramCache::Impl::build(const ProgramSource& src, ProgramCacheStats* delta) {
  std::string options = baseBuildOptions(dev.info());
  if (!src.options.empty()) {
    if (!options.empty()) options += ' ';
    options += src.options;
  }
  cl_context ctx = dev.context();
  cl_device_id id = dev.id();

  std::string disk_key;
  if (disk.enabled()) {
    disk_key = DiskCache::key(src.source, options, dev.info());
    std::string binary;
    bool corrupt = false;
    if (disk.load(disk_key, &binary, &corrupt)) {
      Program p = fromBinary(binary, options);
      if (p) {
        ++delta->disk_hits;
        return p;
      }
      // The header and checksum were fine but the driver refused it (e.g. a driver update
      // that kept its version string): drop it and rebuild.
      ::unlink(disk.pathFor(disk_key).c_str());
      corrupt = true;
    }
    if (corrupt) ++delta->disk_corrupt;
    ++delta->disk_misses;
  }

  const auto t0 = std::chrono::steady_clock::now();
  const char* text = src.source.c_str();
  const size_t len = src.source.size();
  cl_int err = CL_SUCCESS;
  Program p(clCreateProgramWithSource(ctx, 1, &text, &len, &err));
  OCL_CHECK_ERR(err, "clCreateProgramWithSource(" + src.name + ")");
  err = clBuildProgram(p.get(), 1, &id, options.c_str(), nullptr, nullptr);
  ++delta->compiles;
  delta->compile_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (err != CL_SUCCESS) {
    std::string log = buildLog(p.get(), id);
    if (err != CL_BUILD_PROGRAM_FAILURE || log.empty())
      log += (log.empty() ? "" : "\n") + std::string("(clBuildProgram returned ") +
             clErrorName(err) + ")";
    throw BuildError(src.name, options, log);
  }

  if (disk.stores(src)) {
    std::string binary = programBinary(p.get());
    if (!binary.empty() && writeEntryAtomically(disk.dir(), disk.pathFor(disk_key), binary))
      ++delta->disk_writes;
  }
  return p;
}

ProgramCache::ProgramCache(Device& dev, DiskCache disk)
    : id_(g_next_cache_id.fetch_add(1, std::memory_order_relaxed)),
      impl_(std::make_unique<Impl>(dev, std::move(disk))) {}

cl_program ProgramCache::lookupFast(const ProgramKey& key) {
  const FastEntry& e = t_fast[fastSlot(id_, key)];
  if (e.cache != id_ || e.family != key.family || e.variant != key.variant) return nullptr;
  impl_->fast_hits.fetch_add(1, std::memory_order_relaxed);
  return e.program;
}

const std::string* ProgramCache::programName(cl_program program) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto it = impl_->names.find(program);
  return it == impl_->names.end() ? nullptr : &it->second;
}

ProgramCache::~ProgramCache() = default;

cl_program ProgramCache::getSlow(const ProgramKey& key,
                                 const std::function<ProgramSource()>& make) {
  const auto publish = [&](cl_program p) {
    t_fast[fastSlot(id_, key)] = {id_, key.family, key.variant, p};
    return p;
  };
  std::promise<Program> promise;
  {
    std::unique_lock<std::mutex> lock(impl_->mutex);
    auto [it, inserted] = impl_->entries.try_emplace(key);
    if (!inserted) {
      ++impl_->stats.memory_hits;
      if (it->second.program) return publish(it->second.program);
      // Another thread is building it: wait for that build, outside the lock.
      std::shared_future<Program> future = it->second.future;
      lock.unlock();
      return future.get().get();  // rethrows that build's BuildError
    }
    it->second.future = promise.get_future().share();
  }

  ProgramCacheStats delta;
  auto merge = [this, &delta] {
    ProgramCacheStats& s = impl_->stats;
    s.disk_hits += delta.disk_hits;
    s.disk_misses += delta.disk_misses;
    s.disk_corrupt += delta.disk_corrupt;
    s.disk_writes += delta.disk_writes;
    s.compiles += delta.compiles;
    s.compile_seconds += delta.compile_seconds;
  };
  Program program;
  std::string name;
  try {
    ProgramSource src = make();
    name = src.name;
    program = impl_->build(src, &delta);
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(impl_->mutex);
      merge();
      impl_->entries.erase(key);  // a later call retries
    }
    promise.set_exception(std::current_exception());
    throw;
  }
  cl_program raw = program.get();
  promise.set_value(std::move(program));  // the shared state owns the program from now on
  std::lock_guard<std::mutex> lock(impl_->mutex);
  merge();
  impl_->entries.find(key)->second.program = raw;
  impl_->names.emplace(raw, std::move(name));
  return publish(raw);
}

cl_kernel ProgramCache::kernel(cl_program program, const char* name) {
  // Direct-mapped in front of the map: (program, name) -> this thread's kernel. The kernel is
  // owned by `cache` below and lives as long as the thread; the name is compared, not only its
  // address, since callers may pass a temporary string.
  struct Recent {
    cl_program program = nullptr;
    const char* name_ptr = nullptr;
    cl_kernel kernel = nullptr;
    char name[48] = {};
  };
  thread_local Recent recent[64];
  const uintptr_t h = (reinterpret_cast<uintptr_t>(program) >> 4) ^
                      (reinterpret_cast<uintptr_t>(name) * 0x9e3779b97f4a7c15ULL >> 40);
  Recent& r = recent[h & 63];
  if (r.program == program && r.name_ptr == name && std::strcmp(r.name, name) == 0) return r.kernel;
  const auto remember = [&](cl_kernel k) {
    if (std::strlen(name) >= sizeof(r.name)) return k;  // rare: long names take the map
    r.program = program;
    r.name_ptr = name;
    r.kernel = k;
    std::strcpy(r.name, name);
    return k;
  };
  thread_local ThreadKernels cache;
  std::vector<ThreadKernels::Named>& named = cache.by_program[program];
  for (const ThreadKernels::Named& n : named)
    if (std::strcmp(n.name.c_str(), name) == 0) {
      return remember(n.kernel.get());
    }
  cl_int err = CL_SUCCESS;
  Kernel k(clCreateKernel(program, name, &err));
  OCL_CHECK_ERR(err, std::string("clCreateKernel(") + name + ")");
  cl_kernel raw = k.get();
  named.push_back({name, std::move(k)});
  return remember(raw);
}

ProgramCacheStats ProgramCache::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  ProgramCacheStats s = impl_->stats;
  s.memory_hits += impl_->fast_hits.load(std::memory_order_relaxed);
  return s;
}

const DiskCache& ProgramCache::disk() const {
  return impl_->disk;
}

Device& ProgramCache::device() const {
  return impl_->dev;
}

}  // namespace torch_ocl::rt
