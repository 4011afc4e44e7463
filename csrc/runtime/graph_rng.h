// Random numbers in captured graphs (runtime/graph.h), with CUDA graphs' semantics: every replay
// draws fresh numbers, exactly those eager code would draw at the generator's state when the
// replay starts, and the generator advances past them. No torch headers.
//
// A kernel that draws takes (seed, offset) as two cl_ulong arguments. While its stream captures,
// the draw is registered with the graph (addDraw: which generator, and the draw's offset relative
// to that generator's first draw in the capture), and the draw's kernel arguments are bound to it
// (bind ... unbind around the launches). At replay, before anything is enqueued, each generator
// the graph draws from is asked once for its current (seed, offset) and advanced by the
// capture's total (PhiloxSource::advance), and each bound argument of a recorded kernel clone is
// re-set (clSetKernelArg) to that seed and to that offset plus the draw's relative offset. A
// draw can also rewrite host words at each replay (bindHost: the (seed, offset) tensors that
// SDPA's forward returns for its backward).
//
// A draw site that does not register (anything that reads the generator otherwise) is refused
// during capture by its caller, never replayed with the numbers of the capture.
#pragma once

#include "graph.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

namespace torch_ocl::rt {

// A generator, as a graph that draws from it sees it.
class PhiloxSource {
 public:
  virtual ~PhiloxSource() = default;
  // Called once per replay, before its kernels are enqueued: the (seed, offset) the replay's
  // draws count from; advances the generator by `total` (the capture's span of offsets).
  virtual std::pair<uint64_t, uint64_t> advance(uint64_t total) = 0;
};

namespace philox_capture {

// Registers with g (capturing) a draw of `increment` counter values that starts at `offset` of
// generator `key` with seed `seed`; make() creates that generator's source the first time g
// sees key. Returns the draw's handle. Throws CaptureError (and invalidates g) when the
// generator's state went backwards or its seed changed since its first draw in the capture.
int addDraw(CommandGraph& g, const void* key, uint64_t seed, uint64_t offset, uint64_t increment,
            const std::function<std::shared_ptr<PhiloxSource>()>& make);
// The handle of the draw of g's capture that started at (seed, offset), or -1 (a draw made
// outside the capture: its numbers do not change at replays).
int findDraw(const CommandGraph& g, uint64_t seed, uint64_t offset);
// Not a draw: a (seed, offset) pair in host memory (keep_alive owns it) that kernels bound to the
// returned handle take, read again at each replay (SDPA's backward in a graph apart from its
// forward's: the caller refills that memory before each replay).
int addHostSource(CommandGraph& g, const int64_t* seed, const int64_t* offset,
                  std::shared_ptr<void> keep_alive);
// Until unbind, every launch of k recorded into g re-sets its arguments seed_arg and offset_arg
// (cl_ulong) at each replay from draw d.
void bind(CommandGraph& g, int d, cl_kernel k, cl_uint seed_arg, cl_uint offset_arg);
// Ends d's bindings. With require_use, a draw that no recorded kernel (nor host words) took
// invalidates g: its numbers went to a launch that a replay would not redraw.
void unbind(CommandGraph& g, int d, bool require_use);
// At each replay, *seed and *offset (host memory that keep_alive owns) receive draw d's seed and
// offset, before the replay's commands are enqueued.
void bindHost(CommandGraph& g, int d, int64_t* seed, int64_t* offset,
              std::shared_ptr<void> keep_alive);
// Draws registered with g (its RNG kernel arguments are re-set at each replay).
size_t draws(const CommandGraph& g);

}  // namespace philox_capture
}  // namespace torch_ocl::rt
