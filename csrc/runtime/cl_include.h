#pragma once
// One place that decides which OpenCL API level we compile against. We call only 1.2 entry
// points so that every vendor's driver (NVIDIA ships 3.0 without most 2.x features) works.
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
