// Linear algebra shared with the raw benchmarks: the one lock every CLBlast call takes.
#pragma once

#include <mutex>

namespace torch_ocl::aten {

// CLBlast 1.5 has a thread-safety bug in its kernel cache: one call at a time, process-wide.
std::mutex& clblastMutex();

}  // namespace torch_ocl::aten
