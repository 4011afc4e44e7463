// The GEMM tuning table (gemm_tuning.h). The file is plain text, one entry a line:
//   <device key> TAB <dtype> TAB <class> TAB <provider> [TAB <GFLOP/s measured> ...]
// written by torch_ocl/cli/warmup.py; lines starting with '#' are comments. It is read once, on
// the first GEMM (or by gemmTuningReload), under a mutex; lookups take a shared snapshot.
#include "aten/linalg/gemm_tuning.h"

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>

#include "integration/state.h"

namespace torch_ocl::aten {

namespace {

int bucket3(int64_t x) {
  return x <= 96 ? 0 : x <= 768 ? 1 : 2;
}
int bucket4(int64_t x) {
  return x <= 96 ? 0 : x <= 768 ? 1 : x <= 2048 ? 2 : 3;
}

std::string envStr(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

struct Table {
  // (device key, dtype name, class) -> provider
  std::map<std::tuple<std::string, std::string, int>, GemmProvider> entries;
};

std::mutex& tableMutex() {
  static std::mutex m;
  return m;
}
std::shared_ptr<const Table>& tableSlot() {
  static std::shared_ptr<const Table> t;
  return t;
}

std::shared_ptr<const Table> load() {
  auto t = std::make_shared<Table>();
  const std::string path = gemmTuningPath();
  if (path.empty()) return t;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, '\t')) f.push_back(cell);
    if (f.size() < 4) continue;
    try {
      const int cls = std::stoi(f[2]);
      if (cls < 0 || cls >= kGemmShapeClasses) continue;
      t->entries[{f[0], f[1], cls}] = parseGemmProvider(f[3]);
    } catch (...) {
      continue;  // a line from another version: ignored, never fatal
    }
  }
  return t;
}

// Whether the loaded table has no entries: lets gemm() skip the lock and the lookup on the hot
// path of an untuned machine.
std::atomic<bool>& tableEmpty() {
  static std::atomic<bool> e{false};
  return e;
}

std::shared_ptr<const Table> table() {
  std::lock_guard<std::mutex> lock(tableMutex());
  auto& slot = tableSlot();
  if (!slot) {
    slot = load();
    tableEmpty().store(slot->entries.empty());
  }
  return slot;
}

// Device keys are built once per device (the info strings do not change).
const std::string& deviceKeyCached(c10::DeviceIndex idx) {
  static std::mutex m;
  static std::map<c10::DeviceIndex, std::string> keys;
  std::lock_guard<std::mutex> lock(m);
  auto it = keys.find(idx);
  if (it != keys.end()) return it->second;
  const rt::DeviceInfo& info = device(idx).info();
  std::string key = info.name + " | " + info.driver_version + " | " + info.platform_name;
  for (char& c : key)
    if (c == '\t' || c == '\n') c = ' ';
  return keys.emplace(idx, std::move(key)).first->second;
}

}  // namespace

int gemmShapeClass(int64_t rows, int64_t cols, int64_t k, bool b_in_place, bool a_trans,
                   bool b_trans) {
  const int base =
      ((bucket3(rows) * 3 + bucket3(cols)) * 4 + bucket4(k)) * 2 + (b_in_place ? 1 : 0);
  return base + 72 * ((a_trans ? 1 : 0) + (b_trans ? 2 : 0));
}

bool gemmOperandTransposed(const at::Tensor& t) {
  if (t.dim() < 2) return false;
  const int64_t rows = t.size(-2), cols = t.size(-1);
  if (rows <= 1 || cols <= 1) return false;
  return t.stride(-2) == 1 && t.stride(-1) != 1;
}

std::string gemmShapeClassName(int cls) {
  static const char* r3[] = {"<=96", "<=768", ">768"};
  static const char* r4[] = {"<=96", "<=768", "<=2048", ">2048"};
  const int trans = cls / 72;
  cls %= 72;
  const bool inplace = cls % 2;
  cls /= 2;
  const int bk = cls % 4;
  cls /= 4;
  const int bc = cls % 3, br = cls / 3;
  return std::string("rows") + r3[br] + " cols" + r3[bc] + " k" + r4[bk] +
         (inplace ? " B in place" : " B packed") + ((trans & 1) ? " A^T" : "") +
         ((trans & 2) ? " B^T" : "");
}

std::string gemmDeviceKey(c10::DeviceIndex idx) {
  return deviceKeyCached(idx);
}

std::string gemmTuningPath() {
  std::string dir = envStr("TORCH_OCL_CACHE_DIR");
  if (dir.empty()) {
    const std::string xdg = envStr("XDG_CACHE_HOME");
    const std::string home = envStr("HOME");
    if (!xdg.empty())
      dir = xdg + "/torch_ocl";
    else if (!home.empty())
      dir = home + "/.cache/torch_ocl";
  }
  return dir.empty() ? std::string() : dir + "/gemm_tuning.tsv";
}

namespace {
std::atomic<bool>& tuningEnabled() {
  static std::atomic<bool> on{[] {
    const std::string v = envStr("TORCH_OCL_GEMM_TUNING");
    return !(v == "0" || v == "off" || v == "false" || v == "no");
  }()};
  return on;
}
}  // namespace

void setGemmTuningEnabled(bool on) {
  tuningEnabled().store(on);
}
bool gemmTuningEnabled() {
  return tuningEnabled().load();
}

std::optional<GemmProvider> gemmTunedProvider(c10::DeviceIndex idx, c10::ScalarType t, int cls) {
  if (!tuningEnabled().load(std::memory_order_relaxed)) return std::nullopt;
  if (tableEmpty().load(std::memory_order_relaxed)) return std::nullopt;  // loaded, and empty
  const auto tab = table();
  if (tab->entries.empty()) return std::nullopt;
  auto it = tab->entries.find({deviceKeyCached(idx), c10::toString(t), cls});
  if (it == tab->entries.end()) return std::nullopt;
  return it->second;
}

std::map<std::pair<std::string, int>, std::string> gemmTuningTable(c10::DeviceIndex idx) {
  std::map<std::pair<std::string, int>, std::string> out;
  const auto tab = table();
  const std::string& key = deviceKeyCached(idx);
  for (const auto& [k, p] : tab->entries)
    if (std::get<0>(k) == key) out[{std::get<1>(k), std::get<2>(k)}] = gemmProviderName(p);
  return out;
}

int gemmTuningReload() {
  auto fresh = load();
  std::lock_guard<std::mutex> lock(tableMutex());
  tableSlot() = fresh;
  tableEmpty().store(fresh->entries.empty());
  return static_cast<int>(fresh->entries.size());
}

}  // namespace torch_ocl::aten
