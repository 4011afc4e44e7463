// Scheduling of a CPU OpenCL driver's worker threads.
//
// On a CPU driver (PoCL) the device's worker threads run on the same cores as the thread that
// enqueues. Linux's scheduler lets a woken worker preempt the enqueuing thread, so every launch
// onto an idle queue used to cost that thread the kernel's whole run (a 64-float add took 25-40
// us of host time after a synchronize, 3 us into a busy queue), and small, launch-bound steps
// ran at the speed of their kernels plus their Python rather than the larger of the two. The
// driver's threads therefore run under SCHED_BATCH: a woken worker no longer preempts the host
// thread (it runs when that thread blocks, at the scheduler's next tick, or on another core) and
// keeps its fair share of the CPU.
#pragma once

#include <string>
#include <vector>

namespace torch_ocl::rt::driver_threads {

// The ids of this process's threads (Linux: /proc/self/task), sorted; empty where unknown.
std::vector<long> threadIds();

struct Outcome {
  std::string policy;  // "batch", "normal" (TORCH_OCL_DRIVER_THREADS=normal), "n/a"
  int threads = 0;     // threads moved to SCHED_BATCH
  std::string detail;  // why nothing was done, or what failed
};

// Moves the threads created since `before` to SCHED_BATCH, unless
// TORCH_OCL_DRIVER_THREADS=normal. `cpu_only`: every device discovered is a CPU device (the
// threads that appeared during discovery are then the CPU driver's own).
// Runtime::discover() calls it once; outcome() then returns what it did.
void applyBatchPolicy(const std::vector<long>& before, bool cpu_only);
const Outcome& outcome();
// The ids of the threads moved to SCHED_BATCH at discovery (the ones setWorkersBatch switches;
// threads they start later inherit their policy but are not among them).
const std::vector<long>& movedThreads();

// Puts the threads applyBatchPolicy moved back under SCHED_OTHER (batch = false) or under
// SCHED_BATCH again (true); does nothing unless the policy is "batch", or when they are already
// so. For the length of a long kernel (a large GEMM): a woken SCHED_BATCH worker cannot preempt
// the thread running on its core, so it joined such a kernel late, or not at all, whenever that
// core was busy (another process, say), and the kernel ran on one core. Thread-safe; callable
// from a native kernel on a worker. The matrix engine does this for cpu_tile products from 161^3
// multiply-adds (csrc/aten/linalg/gemm.cpp; TORCH_OCL_GEMM_WORKER_SWITCH=0: never).
void setWorkersBatch(bool batch);
// Whether setWorkersBatch has anything to switch (the policy is "batch").
bool workersSwitchable();

}  // namespace torch_ocl::rt::driver_threads
