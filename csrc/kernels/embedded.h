#pragma once
// OpenCL C sources from csrc/kernels/*.cl, embedded at build time (cmake/embed_kernels.cmake).
namespace torch_ocl::kernels {
const char* source(const char* file_name);  // throws std::invalid_argument for unknown names
}
