// The CPU fallback: loud (warns once per op), measured (calls, bytes moved, time per op) and
// optionally an error (strict mode).
#pragma once

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

std::vector<FallbackRecord> fallbackRecords();
void resetFallbackRecords();
void setStrict(bool strict);
bool strict();

}  // namespace torch_ocl::aten
