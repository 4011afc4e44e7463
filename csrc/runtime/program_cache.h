// Program cache: in process (keyed by a small struct, no string building on a hit; compiles run
// outside any global lock; concurrent requests for one key wait for one compile) and on disk
// (binaries keyed by source, options, device, driver, platform and torch-ocl version; atomic
// writes; corrupt entries detected by a checksum and rebuilt). No torch headers.
#pragma once

#include "device.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace torch_ocl::rt {

// Identifies one compiled program. `family` is the address of a static object owned by the
// op family (e.g. a static char), `variant` encodes what the program is specialised on
// (dtypes, rank, contiguity; never sizes).
struct ProgramKey {
  const void* family = nullptr;
  uint64_t variant = 0;
  bool operator==(const ProgramKey& o) const { return family == o.family && variant == o.variant; }
};

struct ProgramSource {
  std::string name;     // for errors and logs, e.g. "copy<float,half>"
  std::string source;   // complete OpenCL C source
  std::string options;  // build options; the device's -cl-std is added by the cache
  // True where a process launches every kernel of the program (a generated or user program),
  // false for the eager kernels' programs, of whose variants a process uses a few. Drivers that
  // compile a kernel only at its first launch (PoCL) compile every kernel to hand out a binary:
  // see DiskCache::storesEveryProgram.
  bool every_kernel_used = false;
};

struct ProgramCacheStats {
  int64_t memory_hits = 0;
  int64_t disk_hits = 0;
  int64_t disk_misses = 0;
  int64_t disk_corrupt = 0;  // entries rejected (bad checksum/header) and rebuilt
  int64_t disk_writes = 0;
  int64_t compiles = 0;  // builds from source
  double compile_seconds = 0;
};

// On-disk binary store. Location: TORCH_OCL_CACHE_DIR, else $XDG_CACHE_HOME/torch_ocl, else
// ~/.cache/torch_ocl. TORCH_OCL_CACHE=0 turns it off, =1 on for every program; unset means on,
// except on NVIDIA, whose driver caches binaries itself, and on PoCL only for programs whose
// every kernel is used (ProgramSource::every_kernel_used; PoCL's own cache keeps the others).
class DiskCache {
 public:
  DiskCache(std::string dir, bool enabled, bool every_program = true);
  static DiskCache fromEnvironment(const DeviceInfo& info);
  bool enabled() const { return enabled_; }
  // Whether the binaries of programs that are not every_kernel_used are stored too. Not on
  // PoCL by default: there clGetProgramInfo(CL_PROGRAM_BINARIES) compiles every kernel of the
  // program, which clBuildProgram does not, and an eager program has many kernels a process
  // never launches (small GPT's first eager step on a cold cache spent most of its time there:
  // the softmax/column-reduction program 13-18 s, the CPU GEMM 3-18 s, norms 12 s on 2 loaded
  // cores, against 0.3-0.9 s for their builds).
  bool storesEveryProgram() const { return every_program_; }
  bool stores(const ProgramSource& src) const {
    return enabled_ && (every_program_ || src.every_kernel_used);
  }
  const std::string& dir() const { return dir_; }
  // Key of a binary: a 128-bit hash, as 32 hex digits.
  static std::string key(const std::string& source, const std::string& options,
                         const DeviceInfo& info);
  // False on a miss or when the entry is corrupt (then the entry is removed and *corrupt set).
  bool load(const std::string& key, std::string* binary, bool* corrupt) const;
  // Writes to a temporary file in the same directory and renames it into place.
  void store(const std::string& key, const std::string& binary) const;
  std::string pathFor(const std::string& key) const;

 private:
  std::string dir_;
  bool enabled_;
  bool every_program_;
};

class ProgramCache {
 public:
  ProgramCache(Device& dev, DiskCache disk);
  ~ProgramCache();
  // Returns the built program for key; `make` (any callable returning ProgramSource) is called
  // only on an in-process miss. Throws BuildError (with the build log) when the source does not
  // build; a later call retries. A hit is served from a per-thread table: no lock, no
  // std::function, no allocation (every launch asks).
  template <class Make>
  cl_program get(const ProgramKey& key, Make&& make) {
    if (cl_program p = lookupFast(key)) return p;
    return getSlow(key, std::function<ProgramSource()>(std::forward<Make>(make)));
  }
  // A cl_kernel for this thread: kernels carry argument state, so one object is never shared
  // between threads (autograd runs backward on its own thread).
  cl_kernel kernel(cl_program program, const char* name);
  ProgramCacheStats stats() const;
  const DiskCache& disk() const;
  Device& device() const;
  // The ProgramSource name a program was built under ("add<Float>"), or nullptr for a program
  // this cache did not build. For the profiler; takes the cache's lock.
  const std::string* programName(cl_program program) const;

 private:
  cl_program lookupFast(const ProgramKey& key);
  cl_program getSlow(const ProgramKey& key, const std::function<ProgramSource()>& make);
  uint64_t id_;  // unique per cache object (the per-thread table keys on it, not the address)
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Build options shared by all our programs on a device (the -cl-std option and fp64 enabling).
std::string baseBuildOptions(const DeviceInfo& info);

extern const char* const kTorchOclVersion;

}  // namespace torch_ocl::rt
