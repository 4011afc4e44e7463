// Program cache tests against a real OpenCL device (PoCL in CI). Each test uses its own
// temporary directory and sets the DiskCache explicitly (except the fromEnvironment tests).
#include "runtime/program_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace torch_ocl::rt {
namespace {

namespace fs = std::filesystem;

// Op families: the address identifies the family.
const char kAddFamily = 0;
const char kOtherFamily = 0;
const char kBadFamily = 0;

const char* const kAddOneSource = R"CLC(
__kernel void add_one(__global float* x) {
  size_t i = get_global_id(0);
  x[i] = x[i] + 1.0f;
}
__kernel void add_two(__global float* x) {
  size_t i = get_global_id(0);
  x[i] = x[i] + 2.0f;
}
)CLC";

ProgramSource addOneSource(const std::string& extra_options = "") {
  return ProgramSource{"add_one<float>", kAddOneSource, extra_options};
}

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/toclpc.XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Sets (or unsets, for nullopt) environment variables and restores them on destruction.
class EnvGuard {
 public:
  void set(const char* name, std::optional<std::string> value) {
    if (saved_.find(name) == saved_.end()) {
      const char* old = std::getenv(name);
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~EnvGuard() {
    for (const auto& [name, value] : saved_) {
      if (value)
        ::setenv(name.c_str(), value->c_str(), 1);
      else
        ::unsetenv(name.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

std::string readFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void writeFile(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::string> filesIn(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    names.push_back(e.path().filename().string());
  return names;
}

bool anyTmpFile(const std::string& dir) {
  for (const std::string& n : filesIn(dir))
    if (n.find(".tmp") != std::string::npos) return true;
  return false;
}

class ProgramCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Runtime::get().deviceCount() == 0)
      GTEST_SKIP() << "no OpenCL device: " << Runtime::get().discoveryError();
    dev_ = &Runtime::get().device(0);
  }

  Device& dev() { return *dev_; }

  std::string fullOptions(const std::string& extra = "") {
    std::string o = baseBuildOptions(dev().info());
    if (!extra.empty()) o += (o.empty() ? "" : " ") + extra;
    return o;
  }

  // Runs kernel `name` over {0, 1, ..., n-1} and returns the result.
  std::vector<float> run(ProgramCache& cache, cl_program program, const char* name, size_t n = 64) {
    std::vector<float> host(n);
    for (size_t i = 0; i < n; ++i) host[i] = static_cast<float>(i);
    cl_int err = CL_SUCCESS;
    Mem buf(clCreateBuffer(dev().context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                           n * sizeof(float), host.data(), &err));
    OCL_CHECK_ERR(err, "clCreateBuffer");
    cl_kernel k = cache.kernel(program, name);
    cl_mem m = buf.get();
    OCL_CHECK(clSetKernelArg(k, 0, sizeof(m), &m));
    cl_command_queue q = dev().queue(0);
    OCL_CHECK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
    OCL_CHECK(
        clEnqueueReadBuffer(q, m, CL_TRUE, 0, n * sizeof(float), host.data(), 0, nullptr, nullptr));
    return host;
  }

  void expectAddOneWorks(ProgramCache& cache, cl_program program) {
    std::vector<float> out = run(cache, program, "add_one");
    for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], static_cast<float>(i) + 1.0f);
  }

  Device* dev_ = nullptr;
};

using DiskCacheTest = ProgramCacheTest;

// ---- in-process cache -------------------------------------------------------------------------

TEST_F(ProgramCacheTest, BuildsAndRunsAKernel) {
  ProgramCache cache(dev(), DiskCache("", false));
  int makes = 0;
  cl_program p = cache.get({&kAddFamily, 1}, [&] {
    ++makes;
    return addOneSource();
  });
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(makes, 1);
  expectAddOneWorks(cache, p);
  std::vector<float> two = run(cache, p, "add_two");
  EXPECT_EQ(two[5], 7.0f);
  ProgramCacheStats s = cache.stats();
  EXPECT_EQ(s.compiles, 1);
  EXPECT_EQ(s.memory_hits, 0);
  EXPECT_EQ(s.disk_hits + s.disk_misses + s.disk_writes + s.disk_corrupt, 0);
  EXPECT_GT(s.compile_seconds, 0.0);
  EXPECT_EQ(&cache.device(), &dev());
  EXPECT_FALSE(cache.disk().enabled());
}

TEST_F(ProgramCacheTest, SecondGetIsAMemoryHitAndDoesNotCallMake) {
  ProgramCache cache(dev(), DiskCache("", false));
  int makes = 0;
  auto make = [&] {
    ++makes;
    return addOneSource();
  };
  cl_program a = cache.get({&kAddFamily, 7}, make);
  cl_program b = cache.get({&kAddFamily, 7}, make);
  cl_program c = cache.get({&kAddFamily, 7}, make);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, c);
  EXPECT_EQ(makes, 1);
  ProgramCacheStats s = cache.stats();
  EXPECT_EQ(s.memory_hits, 2);
  EXPECT_EQ(s.compiles, 1);
}

TEST_F(ProgramCacheTest, HitsOfANewCacheNeverComeFromAnOldOne) {
  // The per-thread hit table keys on a cache id, not the address: a cache built where an old
  // one lived must compile again, not return the old (released) program.
  int makes = 0;
  auto make = [&] {
    ++makes;
    return addOneSource();
  };
  for (int round = 0; round < 3; ++round) {
    auto cache = std::make_unique<ProgramCache>(dev(), DiskCache("", false));
    cl_program p = cache->get({&kAddFamily, 11}, make);
    EXPECT_EQ(cache->get({&kAddFamily, 11}, make), p);
    expectAddOneWorks(*cache, p);
    EXPECT_EQ(cache->stats().memory_hits, 1);
  }
  EXPECT_EQ(makes, 3);
}

TEST_F(ProgramCacheTest, OtherThreadsHitWithoutCompiling) {
  ProgramCache cache(dev(), DiskCache("", false));
  int makes = 0;
  auto make = [&] {
    ++makes;
    return addOneSource();
  };
  cl_program p = cache.get({&kAddFamily, 12}, make);
  cl_program q = nullptr, k = nullptr;
  std::thread t([&] {
    q = cache.get({&kAddFamily, 12}, make);
    k = cache.get({&kAddFamily, 12}, make);
  });
  t.join();
  EXPECT_EQ(q, p);
  EXPECT_EQ(k, p);
  EXPECT_EQ(makes, 1);
  EXPECT_EQ(cache.stats().memory_hits, 2);
}

TEST_F(ProgramCacheTest, DifferentVariantOrFamilyCompilesSeparately) {
  ProgramCache cache(dev(), DiskCache("", false));
  int makes = 0;
  auto make = [&] {
    ++makes;
    return addOneSource();
  };
  cl_program a = cache.get({&kAddFamily, 1}, make);
  cl_program b = cache.get({&kAddFamily, 2}, make);
  cl_program c = cache.get({&kOtherFamily, 1}, make);
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(b, c);
  EXPECT_EQ(makes, 3);
  EXPECT_EQ(cache.stats().compiles, 3);
  EXPECT_EQ(cache.stats().memory_hits, 0);
  expectAddOneWorks(cache, b);
}

TEST_F(ProgramCacheTest, BaseBuildOptionsFollowDeviceInfo) {
  DeviceInfo info;
  info.cl_c_major = 1;
  info.cl_c_minor = 2;
  EXPECT_EQ(baseBuildOptions(info), "-cl-std=CL1.2");
  info.fp64 = true;
  EXPECT_EQ(baseBuildOptions(info), "-cl-std=CL1.2 -DTORCH_OCL_FP64=1");
  info.fp16 = true;
  EXPECT_EQ(baseBuildOptions(info), "-cl-std=CL1.2 -DTORCH_OCL_FP64=1 -DTORCH_OCL_FP16=1");
  info.fp64 = info.fp16 = false;
  info.cl_c_major = 3;
  info.cl_c_minor = 0;
  EXPECT_EQ(baseBuildOptions(info), "-cl-std=CL3.0");
  info.cl_c_major = 2;
  info.cl_c_minor = 1;
  EXPECT_EQ(baseBuildOptions(info), "-cl-std=CL2.0");
  info.cl_c_major = 1;
  info.cl_c_minor = 1;
  EXPECT_EQ(baseBuildOptions(info), "-cl-std=CL1.1");

  // The real device: same -cl-std as Device::clStdOption, and the feature macros reach the
  // compiler (the cache prepends the base options to ProgramSource::options).
  const std::string base = baseBuildOptions(dev().info());
  EXPECT_EQ(base.rfind(dev().clStdOption(), 0), 0u) << base;
  ProgramCache cache(dev(), DiskCache("", false));
  std::string src = std::string(kAddOneSource) +
                    (dev().info().fp64 ? "#ifndef TORCH_OCL_FP64\n#error no fp64 macro\n#endif\n"
                                       : "#ifdef TORCH_OCL_FP64\n#error fp64 macro\n#endif\n") +
                    "#ifndef EXTRA_OPT\n#error extra option lost\n#endif\n";
  cl_program p = cache.get({&kAddFamily, 99}, [&] {
    return ProgramSource{"options", src, "-DEXTRA_OPT=1"};
  });
  expectAddOneWorks(cache, p);
}

TEST_F(ProgramCacheTest, BuildFailureThrowsWithLogAndLaterCallRetries) {
  ProgramCache cache(dev(), DiskCache("", false));
  const ProgramKey key{&kBadFamily, 3};
  int makes = 0;
  auto bad = [&] {
    ++makes;
    return ProgramSource{"broken<float>",
                         "__kernel void broken(__global float* x) {\n"
                         "  x[0] = undeclared_thing_xyz;\n"
                         "}\n",
                         "-DSOME_FLAG=1"};
  };
  try {
    cache.get(key, bad);
    FAIL() << "expected BuildError";
  } catch (const BuildError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("broken<float>"), std::string::npos) << what;
    EXPECT_NE(what.find("-DSOME_FLAG=1"), std::string::npos) << what;
    EXPECT_NE(what.find(dev().clStdOption()), std::string::npos) << what;
    EXPECT_NE(what.find("undeclared_thing_xyz"), std::string::npos) << what;
    EXPECT_NE(e.log().find("undeclared_thing_xyz"), std::string::npos) << e.log();
  }
  EXPECT_EQ(makes, 1);
  // The failed entry was removed: the same key builds again (and fails again).
  EXPECT_THROW(cache.get(key, bad), BuildError);
  EXPECT_EQ(makes, 2);
  // Same key with a valid source now works.
  cl_program p = cache.get(key, [] { return addOneSource(); });
  expectAddOneWorks(cache, p);
  EXPECT_EQ(cache.get(key, bad), p);  // a memory hit: make is not called
  EXPECT_EQ(makes, 2);
  EXPECT_EQ(cache.stats().memory_hits, 1);
}

TEST_F(ProgramCacheTest, ExceptionFromMakeIsPropagatedAndNotCached) {
  ProgramCache cache(dev(), DiskCache("", false));
  const ProgramKey key{&kBadFamily, 4};
  EXPECT_THROW(cache.get(key, []() -> ProgramSource { throw std::invalid_argument("no dtype"); }),
               std::invalid_argument);
  cl_program p = cache.get(key, [] { return addOneSource(); });
  expectAddOneWorks(cache, p);
}

TEST_F(ProgramCacheTest, ConcurrentRequestsForOneKeyCompileOnce) {
  ProgramCache cache(dev(), DiskCache("", false));
  constexpr int kThreads = 4;
  std::atomic<int> makes{0};
  std::atomic<int> ready{0};
  std::vector<cl_program> results(kThreads, nullptr);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      results[t] = cache.get({&kAddFamily, 42}, [&] {
        makes.fetch_add(1);
        // Keeps the build in flight while the other threads arrive.
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        return addOneSource();
      });
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(makes.load(), 1);
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(results[t], results[0]);
  ProgramCacheStats s = cache.stats();
  EXPECT_EQ(s.compiles, 1);
  EXPECT_EQ(s.memory_hits, kThreads - 1);
  expectAddOneWorks(cache, results[0]);
}

TEST_F(ProgramCacheTest, ConcurrentWaitersSeeTheBuildError) {
  ProgramCache cache(dev(), DiskCache("", false));
  constexpr int kThreads = 4;
  std::atomic<int> ready{0};
  std::atomic<int> build_errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      try {
        cache.get({&kBadFamily, 5}, [] {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          return ProgramSource{"bad", "__kernel void f() { nope_nope(); }", ""};
        });
      } catch (const BuildError& e) {
        if (std::string(e.what()).find("nope_nope") != std::string::npos) build_errors++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(build_errors.load(), kThreads);
  EXPECT_GE(cache.stats().compiles, 1);
}

TEST_F(ProgramCacheTest, BuildOfOneKeyDoesNotBlockOtherKeys) {
  ProgramCache cache(dev(), DiskCache("", false));
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> entered;
  std::thread slow([&] {
    cache.get({&kAddFamily, 100}, [&] {
      entered.set_value();
      // Held until the main thread has built another key (bounded, so a bug fails the test
      // rather than hanging it).
      released.wait_for(std::chrono::seconds(60));
      return addOneSource();
    });
  });
  entered.get_future().wait();
  cl_program other = cache.get({&kAddFamily, 101}, [] { return addOneSource(); });
  const bool slow_still_building =
      released.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
  release.set_value();
  slow.join();
  EXPECT_TRUE(slow_still_building);
  expectAddOneWorks(cache, other);
  EXPECT_EQ(cache.stats().compiles, 2);
}

TEST_F(ProgramCacheTest, KernelIsPerThreadAndCached) {
  ProgramCache cache(dev(), DiskCache("", false));
  cl_program p = cache.get({&kAddFamily, 1}, [] { return addOneSource(); });
  cl_kernel a1 = cache.kernel(p, "add_one");
  std::string name = "add_one";  // a different pointer to the same name
  cl_kernel a2 = cache.kernel(p, name.c_str());
  EXPECT_EQ(a1, a2);
  cl_kernel b = cache.kernel(p, "add_two");
  EXPECT_NE(a1, b);

  cl_kernel other_thread = nullptr, other_thread_again = nullptr;
  std::thread t([&] {
    other_thread = cache.kernel(p, "add_one");
    other_thread_again = cache.kernel(p, "add_one");
  });
  t.join();
  EXPECT_NE(other_thread, nullptr);
  EXPECT_NE(other_thread, a1);
  EXPECT_EQ(other_thread, other_thread_again);

  // The kernel belongs to the program.
  cl_program owner = nullptr;
  ASSERT_EQ(clGetKernelInfo(a1, CL_KERNEL_PROGRAM, sizeof(owner), &owner, nullptr), CL_SUCCESS);
  EXPECT_EQ(owner, p);
}

TEST_F(ProgramCacheTest, KernelThreadsRunConcurrently) {
  ProgramCache cache(dev(), DiskCache("", false));
  cl_program p = cache.get({&kAddFamily, 1}, [] { return addOneSource(); });
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        std::vector<float> out = run(cache, p, "add_one", 256);
        bool good = true;
        for (size_t j = 0; j < out.size(); ++j) good = good && out[j] == static_cast<float>(j) + 1;
        if (!good) return;
      }
      ok++;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 4);
}

TEST_F(ProgramCacheTest, UnknownKernelNameThrowsClError) {
  ProgramCache cache(dev(), DiskCache("", false));
  cl_program p = cache.get({&kAddFamily, 1}, [] { return addOneSource(); });
  try {
    cache.kernel(p, "no_such_kernel");
    FAIL() << "expected ClError";
  } catch (const ClError& e) {
    EXPECT_EQ(e.code(), CL_INVALID_KERNEL_NAME);
    EXPECT_NE(std::string(e.what()).find("CL_INVALID_KERNEL_NAME"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("no_such_kernel"), std::string::npos);
  }
  EXPECT_NE(cache.kernel(p, "add_one"), nullptr);
}

// ---- disk cache through ProgramCache ---------------------------------------------------------

TEST_F(DiskCacheTest, FreshProgramCacheLoadsFromDisk) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/nested/cache";  // created on first store (mkdir -p)
  const std::string file =
      DiskCache(dir, true).pathFor(DiskCache::key(kAddOneSource, fullOptions(), dev().info()));
  {
    ProgramCache cache(dev(), DiskCache(dir, true));
    cl_program p = cache.get({&kAddFamily, 1}, [] { return addOneSource(); });
    expectAddOneWorks(cache, p);
    ProgramCacheStats s = cache.stats();
    EXPECT_EQ(s.compiles, 1);
    EXPECT_EQ(s.disk_hits, 0);
    EXPECT_EQ(s.disk_misses, 1);
    EXPECT_EQ(s.disk_writes, 1);
    EXPECT_EQ(s.disk_corrupt, 0);
  }
  ASSERT_TRUE(fs::exists(file));
  EXPECT_EQ(filesIn(dir).size(), 1u);
  EXPECT_FALSE(anyTmpFile(dir));
  {
    ProgramCache cache(dev(), DiskCache(dir, true));
    int makes = 0;
    cl_program p = cache.get({&kAddFamily, 1}, [&] {
      ++makes;
      return addOneSource();
    });
    expectAddOneWorks(cache, p);
    ProgramCacheStats s = cache.stats();
    EXPECT_EQ(makes, 1);  // the source is needed to compute the disk key
    EXPECT_EQ(s.disk_hits, 1);
    EXPECT_EQ(s.compiles, 0);
    EXPECT_EQ(s.disk_misses, 0);
    EXPECT_EQ(s.disk_writes, 0);
  }
  {
    // Different options: a different disk entry.
    ProgramCache cache(dev(), DiskCache(dir, true));
    cl_program p = cache.get({&kAddFamily, 1}, [] { return addOneSource("-DOTHER=1"); });
    expectAddOneWorks(cache, p);
    EXPECT_EQ(cache.stats().compiles, 1);
    EXPECT_EQ(cache.stats().disk_hits, 0);
    EXPECT_EQ(filesIn(dir).size(), 2u);
  }
}

class DiskCacheCorruptionTest : public DiskCacheTest {
 protected:
  // Builds once so that the entry exists, damages it with `damage`, then checks that a fresh
  // cache rejects it, rebuilds from source and rewrites a valid entry.
  void check(const std::function<void(const std::string& path)>& damage) {
    TempDir tmp;
    const std::string file =
        DiskCache(tmp.path(), true)
            .pathFor(DiskCache::key(kAddOneSource, fullOptions(), dev().info()));
    {
      ProgramCache cache(dev(), DiskCache(tmp.path(), true));
      cache.get({&kAddFamily, 1}, [] { return addOneSource(); });
    }
    const std::string good = readFile(file);
    ASSERT_GT(good.size(), 64u);
    damage(file);
    const std::string bad = readFile(file);
    ASSERT_NE(bad, good);

    ProgramCache cache(dev(), DiskCache(tmp.path(), true));
    cl_program p = cache.get({&kAddFamily, 1}, [] { return addOneSource(); });
    expectAddOneWorks(cache, p);
    ProgramCacheStats s = cache.stats();
    EXPECT_EQ(s.disk_corrupt, 1);
    EXPECT_EQ(s.disk_hits, 0);
    EXPECT_EQ(s.compiles, 1);
    EXPECT_EQ(s.disk_writes, 1);
    ASSERT_TRUE(fs::exists(file));
    EXPECT_NE(readFile(file), bad);
    std::string payload;
    bool corrupt = true;
    EXPECT_TRUE(cache.disk().load(DiskCache::key(kAddOneSource, fullOptions(), dev().info()),
                                  &payload, &corrupt));
    EXPECT_FALSE(corrupt);
    EXPECT_FALSE(anyTmpFile(tmp.path()));
  }
};

TEST_F(DiskCacheCorruptionTest, FlippedPayloadBytesAreDetectedAndRebuilt) {
  check([](const std::string& path) {
    std::string bytes = readFile(path);
    for (size_t i = bytes.size() / 2; i < bytes.size() / 2 + 8; ++i) bytes[i] ^= 0x5a;
    writeFile(path, bytes);
  });
}

TEST_F(DiskCacheCorruptionTest, TruncatedFileIsDetectedAndRebuilt) {
  check([](const std::string& path) { fs::resize_file(path, fs::file_size(path) / 2); });
}

TEST_F(DiskCacheCorruptionTest, TruncatedHeaderIsDetectedAndRebuilt) {
  check([](const std::string& path) { fs::resize_file(path, 10); });
}

TEST_F(DiskCacheCorruptionTest, BadMagicIsDetectedAndRebuilt) {
  check([](const std::string& path) {
    std::string bytes = readFile(path);
    bytes[0] = 'X';
    writeFile(path, bytes);
  });
}

TEST_F(DiskCacheCorruptionTest, BinaryRefusedByTheDriverIsRebuilt) {
  // A well-formed entry (valid header and checksum) whose payload is not a program binary.
  check([this](const std::string& path) {
    DiskCache(fs::path(path).parent_path().string(), true)
        .store(DiskCache::key(kAddOneSource, fullOptions(), dev().info()),
               std::string(4096, '\x7f'));
  });
}

// ---- DiskCache on its own --------------------------------------------------------------------

TEST_F(DiskCacheTest, StoreThenLoadRoundTrips) {
  TempDir tmp;
  DiskCache disk(tmp.path() + "/a/b", true);
  std::string payload;
  for (int i = 0; i < 100000; ++i) payload.push_back(static_cast<char>(i * 31));
  std::string out = "untouched";
  bool corrupt = true;
  EXPECT_FALSE(disk.load("0123456789abcdef0123456789abcdef", &out, &corrupt));
  EXPECT_FALSE(corrupt);
  EXPECT_EQ(out, "untouched");
  disk.store("0123456789abcdef0123456789abcdef", payload);
  EXPECT_TRUE(disk.load("0123456789abcdef0123456789abcdef", &out, &corrupt));
  EXPECT_FALSE(corrupt);
  EXPECT_EQ(out, payload);
  EXPECT_EQ(disk.pathFor("k"), tmp.path() + "/a/b/k.clbin");
  // Header: magic, version, size, checksum, then the payload.
  const std::string raw = readFile(disk.pathFor("0123456789abcdef0123456789abcdef"));
  EXPECT_EQ(raw.substr(0, 8), "TOCLBIN1");
  EXPECT_EQ(raw.size(), payload.size() + 32);
  // Empty payloads are valid entries too.
  disk.store("empty", "");
  EXPECT_TRUE(disk.load("empty", &out, &corrupt));
  EXPECT_EQ(out, "");
}

TEST_F(DiskCacheTest, CorruptEntryIsRemovedAndReported) {
  TempDir tmp;
  DiskCache disk(tmp.path(), true);
  disk.store("k1", "hello binary payload");
  std::string bytes = readFile(disk.pathFor("k1"));
  bytes.back() ^= 1;
  writeFile(disk.pathFor("k1"), bytes);
  std::string out;
  bool corrupt = false;
  EXPECT_FALSE(disk.load("k1", &out, &corrupt));
  EXPECT_TRUE(corrupt);
  EXPECT_FALSE(fs::exists(disk.pathFor("k1")));
  // Next time it is a plain miss.
  EXPECT_FALSE(disk.load("k1", &out, &corrupt));
  EXPECT_FALSE(corrupt);
  // A file that grew (size field no longer matches) is corrupt too.
  disk.store("k2", "abc");
  writeFile(disk.pathFor("k2"), readFile(disk.pathFor("k2")) + "extra");
  EXPECT_FALSE(disk.load("k2", &out, &corrupt));
  EXPECT_TRUE(corrupt);
  // Wrong format version.
  disk.store("k3", "abc");
  bytes = readFile(disk.pathFor("k3"));
  bytes[8] = 99;
  writeFile(disk.pathFor("k3"), bytes);
  EXPECT_FALSE(disk.load("k3", &out, &corrupt));
  EXPECT_TRUE(corrupt);
}

TEST_F(DiskCacheTest, DisabledCacheNeitherReadsNorWrites) {
  TempDir tmp;
  DiskCache on(tmp.path(), true);
  on.store("k", "payload");
  DiskCache off(tmp.path(), false);
  EXPECT_FALSE(off.enabled());
  std::string out;
  bool corrupt = true;
  EXPECT_FALSE(off.load("k", &out, &corrupt));
  EXPECT_FALSE(corrupt);
  off.store("k2", "payload");
  EXPECT_FALSE(fs::exists(off.pathFor("k2")));
  EXPECT_FALSE(DiskCache("", true).enabled());  // no directory, no cache

  ProgramCache cache(dev(), DiskCache(tmp.path() + "/off", false));
  cache.get({&kAddFamily, 1}, [] { return addOneSource(); });
  EXPECT_FALSE(fs::exists(tmp.path() + "/off"));
  EXPECT_EQ(cache.stats().disk_misses, 0);
  EXPECT_EQ(cache.stats().disk_writes, 0);
}

TEST_F(DiskCacheTest, AtomicWritesLeaveNoTemporaryFiles) {
  TempDir tmp;
  DiskCache disk(tmp.path(), true);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&disk, t] {
      // Everyone writes the same key (with different payloads) and a key of its own.
      std::string payload(50000 + t, static_cast<char>('a' + t));
      for (int i = 0; i < 20; ++i) {
        disk.store("shared", payload);
        disk.store("own" + std::to_string(t), payload);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_FALSE(anyTmpFile(tmp.path()));
  EXPECT_EQ(filesIn(tmp.path()).size(), 9u);
  std::string out;
  bool corrupt = false;
  ASSERT_TRUE(disk.load("shared", &out, &corrupt));  // one complete payload, never a mix
  EXPECT_GE(out.size(), 50000u);
  EXPECT_EQ(out, std::string(out.size(), out[0]));
}

TEST_F(DiskCacheTest, StoreFailuresAreSilent) {
  TempDir tmp;
  writeFile(tmp.path() + "/file", "x");
  DiskCache under_file(tmp.path() + "/file/sub", true);  // cannot create this directory
  EXPECT_NO_THROW(under_file.store("k", "payload"));
  std::string out;
  bool corrupt = true;
  EXPECT_FALSE(under_file.load("k", &out, &corrupt));
  EXPECT_FALSE(corrupt);
  // A ProgramCache with an unusable directory still builds.
  ProgramCache cache(dev(), DiskCache(tmp.path() + "/file/sub", true));
  cl_program p = cache.get({&kAddFamily, 1}, [] { return addOneSource(); });
  expectAddOneWorks(cache, p);
  EXPECT_EQ(cache.stats().compiles, 1);
  EXPECT_EQ(cache.stats().disk_writes, 0);
}

TEST_F(DiskCacheTest, KeyDependsOnEveryInput) {
  const DeviceInfo& base = dev().info();
  const std::string k = DiskCache::key("src", "-opt", base);
  EXPECT_EQ(k.size(), 32u);
  EXPECT_EQ(k.find_first_not_of("0123456789abcdef"), std::string::npos) << k;
  EXPECT_EQ(DiskCache::key("src", "-opt", base), k);  // deterministic
  EXPECT_NE(DiskCache::key("src ", "-opt", base), k);
  EXPECT_NE(DiskCache::key("src", "-opt -DX", base), k);
  // Field boundaries are unambiguous.
  EXPECT_NE(DiskCache::key("ab", "c", base), DiskCache::key("a", "bc", base));
  EXPECT_NE(DiskCache::key("", "srcopt", base), DiskCache::key("srcopt", "", base));

  std::vector<std::string DeviceInfo::*> fields = {
      &DeviceInfo::name,           &DeviceInfo::vendor,        &DeviceInfo::driver_version,
      &DeviceInfo::device_version, &DeviceInfo::platform_name, &DeviceInfo::platform_version};
  for (auto field : fields) {
    DeviceInfo changed = base;
    changed.*field += "x";
    EXPECT_NE(DiskCache::key("src", "-opt", changed), k);
  }
  // The other fields (sizes etc.) do not matter.
  DeviceInfo same = base;
  same.global_mem_size += 1;
  EXPECT_EQ(DiskCache::key("src", "-opt", same), k);
  EXPECT_STRNE(kTorchOclVersion, "");
  EXPECT_STREQ(kTorchOclVersion, TORCH_OCL_VERSION);
}

TEST_F(DiskCacheTest, FromEnvironment) {
  EnvGuard env;
  TempDir tmp;
  DeviceInfo pocl;
  pocl.platform_name = "Portable Computing Language";
  DeviceInfo nvidia;
  nvidia.platform_name = "NVIDIA CUDA";
  nvidia.platform_vendor = "NVIDIA Corporation";
  DeviceInfo amd;
  amd.platform_name = "AMD Accelerated Parallel Processing";
  amd.platform_vendor = "Advanced Micro Devices, Inc.";

  env.set("TORCH_OCL_CACHE_DIR", tmp.path() + "/explicit");
  env.set("XDG_CACHE_HOME", tmp.path() + "/xdg");
  env.set("HOME", tmp.path() + "/home");

  env.set("TORCH_OCL_CACHE", std::nullopt);
  // On by default except on NVIDIA (PoCL too: loading our binary beats a build from its cache).
  EXPECT_TRUE(DiskCache::fromEnvironment(pocl).enabled());
  EXPECT_FALSE(DiskCache::fromEnvironment(nvidia).enabled());
  EXPECT_TRUE(DiskCache::fromEnvironment(amd).enabled());
  EXPECT_EQ(DiskCache::fromEnvironment(amd).dir(), tmp.path() + "/explicit");

  env.set("TORCH_OCL_CACHE", "0");
  EXPECT_FALSE(DiskCache::fromEnvironment(amd).enabled());
  EXPECT_FALSE(DiskCache::fromEnvironment(dev().info()).enabled());
  {
    ProgramCache cache(dev(), DiskCache::fromEnvironment(dev().info()));
    cache.get({&kAddFamily, 1}, [] { return addOneSource(); });
    EXPECT_EQ(cache.stats().disk_writes, 0);
    EXPECT_FALSE(fs::exists(tmp.path() + "/explicit"));
  }

  env.set("TORCH_OCL_CACHE", "1");
  EXPECT_TRUE(DiskCache::fromEnvironment(pocl).enabled());
  EXPECT_TRUE(DiskCache::fromEnvironment(nvidia).enabled());
  {
    ProgramCache cache(dev(), DiskCache::fromEnvironment(dev().info()));
    cache.get({&kAddFamily, 1}, [] { return addOneSource(); });
    EXPECT_EQ(cache.stats().disk_writes, 1);
    EXPECT_EQ(filesIn(tmp.path() + "/explicit").size(), 1u);
  }

  env.set("TORCH_OCL_CACHE_DIR", std::nullopt);
  EXPECT_EQ(DiskCache::fromEnvironment(amd).dir(), tmp.path() + "/xdg/torch_ocl");
  env.set("XDG_CACHE_HOME", "");
  EXPECT_EQ(DiskCache::fromEnvironment(amd).dir(), tmp.path() + "/home/.cache/torch_ocl");
  env.set("XDG_CACHE_HOME", std::nullopt);
  EXPECT_EQ(DiskCache::fromEnvironment(amd).dir(), tmp.path() + "/home/.cache/torch_ocl");
  env.set("HOME", std::nullopt);
  EXPECT_FALSE(DiskCache::fromEnvironment(amd).enabled());  // nowhere to put it
}

}  // namespace
}  // namespace torch_ocl::rt
