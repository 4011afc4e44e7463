// The CPU fallback: loud (warns once per op), measured (calls, bytes moved, time per op) and
// optionally an error (strict mode).
#pragma once

#include <ATen/core/ivalue.h>

#include <cstdint>
#include <string>
#include <vector>

namespace torch_ocl::aten {

struct FallbackRecord {
  std::string op;
  int64_t calls = 0;
  int64_t bytes_to_host = 0;    // ocl tensors copied to the CPU for the call
  int64_t bytes_to_device = 0;  // results and mutated arguments copied back
  double seconds = 0;
};

// Runs an op through the CPU fallback from inside a native kernel (for dtypes a native kernel does
// not cover); counted and reported like any other fallback. Returns the op's results.
std::vector<c10::IValue> runFallback(const char* name, const char* overload,
                                     std::vector<c10::IValue> args);

std::vector<FallbackRecord> fallbackRecords();
void resetFallbackRecords();
void setStrict(bool strict);  // the base value, under any open strict() blocks
bool strict();
// A strict(enabled) block: the newest open block wins; blocks may close in any order.
uint64_t pushStrict(bool strict);
void popStrict(uint64_t token);

}  // namespace torch_ocl::aten
