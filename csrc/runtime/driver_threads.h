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

// For the length of long kernels (large GEMMs): beginWorkersNormal() puts the threads
// applyBatchPolicy moved back under SCHED_OTHER, and the matching endWorkersNormal() puts them
// under SCHED_BATCH again once no other begin is outstanding (so products queued back to back keep
// SCHED_OTHER until the last one ends). A woken SCHED_BATCH worker cannot preempt the thread
// running on its core, so it joined such a kernel late (milliseconds), or not at all, whenever
// that core was busy (another process, or a host BLAS thread spinning after its last call): the
// kernel ran on one core, and queued kernels waited between each other. Nothing happens unless
// the policy is "batch". Thread-safe; endWorkersNormal is called from a native kernel on a worker.
// The matrix engine does this for products from 161^3 multiply-adds
// (TORCH_OCL_GEMM_WORKER_SWITCH=0: never).
void beginWorkersNormal();
void endWorkersNormal();
// Whether begin/endWorkersNormal have anything to switch (the policy is "batch").
bool workersSwitchable();

}  // namespace torch_ocl::rt::driver_threads
