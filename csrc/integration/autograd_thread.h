// Which thread runs the backward of ocl tensors.
//
// PyTorch's autograd engine hands every node of a non-CPU device to a worker thread of that
// device and makes the thread that called backward() wait for it: two cross-thread wake-ups per
// backward, plus a GIL hand-over for every Python node (a compiled graph's backward is one).
// On the machines we measured (2-core VMs, PoCL) that cost about 95 us per backward call
// (torch.autograd.grad of one multiply: 190 us on the device thread, 94 us on the caller) and
// 10-20 % of small training steps, eager and compiled. A single ocl device gains nothing from the
// extra thread, so the thread that initialises the device runs its backward passes itself:
// autograd's own switch for that (c10::AutogradState's multithreading flag, what
// torch.autograd.set_multithreading_enabled(False) sets) is turned off in that thread. Where
// there are several ocl devices and not all of them are CPU devices, PyTorch's device threads
// stay (they run the backward of different GPUs in parallel). TORCH_OCL_AUTOGRAD_THREAD=device
// keeps them everywhere, =caller drops them everywhere.
#pragma once

#include <string>

namespace torch_ocl::autograd_thread {

struct Outcome {
  std::string policy = "n/a";  // "caller", "device", "n/a" (not initialised yet)
  long thread = 0;             // the Linux thread id it was applied to (0: none)
  std::string detail = "the device is not initialised yet";
};

// Called once, by the thread that initialises the ocl devices. cpu_devices: how many of the
// `devices` are CPU devices.
void applyOnInit(int devices, int cpu_devices);
Outcome outcome();

// Called at interpreter exit (a Python atexit hook, before finalisation starts), with the GIL
// released. Waits until PyTorch's autograd device thread of every ocl device has finished what
// it took before: a finished backward's graph task can be released by the device thread after
// backward() has returned, and releasing it drops Python objects (the contextvars.Context that
// torch.autograd stashes in the task's thread-local state), which takes the GIL. A device thread
// that takes the GIL while Py_FinalizeEx runs is ended by CPython with pthread_exit, whose
// forced unwind through the engine's noexcept frames calls std::terminate: an abort after all
// work is done. It runs an empty backward (a zero-size ocl leaf's gradient, captured, no node
// executed, no kernel) on every device thread from a fresh C++ thread (no Python objects in its
// thread-local state); a device thread takes tasks one at a time, so once that backward is back
// the thread has released everything before it. Returns "drained", "skipped: <why>" (no device
// initialised, fork child, no autograd device thread running) or "timeout"/"error: <what>".
std::string drainDeviceThreads(int devices, double timeout_s);

}  // namespace torch_ocl::autograd_thread
