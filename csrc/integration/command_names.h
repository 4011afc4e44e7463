// The names of torch.profiler's rows for commands that are not kernels of a program: copies and
// fills (the names Kineto gives CUDA's memcpy and memset activities) and host-BLAS products (a
// native kernel). Shared by the live commands (aten/core/copy.cpp, fill.cpp, linalg/gemm.cpp)
// and graph replays (integration/graph.cpp), so a replayed command shows as the same row.
#pragma once

namespace torch_ocl::command_names {

inline constexpr const char kMemcpyDtoD[] = "Memcpy DtoD (Device -> Device)";
inline constexpr const char kMemcpyHtoD[] = "Memcpy HtoD (Host -> Device)";
inline constexpr const char kMemcpyDtoH[] = "Memcpy DtoH (Device -> Host)";
inline constexpr const char kMemset[] = "Memset (Device)";
inline constexpr const char kHostBlas[] = "host_blas::gemm";

}  // namespace torch_ocl::command_names
