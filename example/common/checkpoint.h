// Checkpoints in the simulations (--checkpoint-every N PATH, --resume PATH)
// on the heap's side: load a run's checkpoint into its new heap, save one
// after every N-th step. The DynaSOAr heap and BitmapAlloc have them
// (dynasoar::kCanMoveObjects); a program on another back end refuses the
// options before it makes anything.
#pragma once

#include <dynasoar/dynasoar.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dynasoar/support/phase_timer.h"
#include "example/common/checkpoint_options.h"

namespace dynasoar::example {

/// Throws std::invalid_argument if `c` asks for checkpoints and the back
/// end of Alloc has none.
template <class Alloc>
void check_checkpoints(const CheckpointOptions& c, const std::string& example) {
  if constexpr (!kCanMoveObjects<Alloc>)
    refuse_checkpoints(c, example, std::string("runs on ") + backend::Selected::kName);
}

/// --resume: loads the checkpoint into `heap` (new and empty) and returns
/// the step it was saved after; 0 without --resume. The run state is read
/// and checked first (run_identity, resumed_step), so a checkpoint of
/// another run is refused before the heap changes. With `state`, the run
/// state goes there too (for saved_counts).
template <class Handle>
int resume(Handle& heap, const CheckpointOptions& c, const std::string& identity, int steps,
           std::string* state = nullptr) {
  if (c.resume.empty()) return 0;
  if constexpr (kCanMoveObjects<typename Handle::Allocator>) {
    std::ifstream in(c.resume, std::ios::binary);
    if (!in) throw std::invalid_argument("--resume: cannot read " + c.resume);
    std::string user = move::read_checkpoint_info(in).user;
    const int step = resumed_step(user, identity, steps, c.resume);
    heap.load_checkpoint(std::filesystem::path(c.resume));
    if (state != nullptr) *state = std::move(user);
    return step;
  } else {
    throw std::logic_error(
        "--resume on a back end without checkpoints (check_checkpoints refuses it first)");
  }
}

/// The k-th table of T that the loaded checkpoint gave back (after resume).
template <class T, class Handle>
ObjectTable<typename Handle::Allocator, T> table_from_checkpoint(Handle& heap, std::size_t k = 0) {
  if constexpr (kCanMoveObjects<typename Handle::Allocator>)
    return heap.template restored_table<T>(k);
  else
    throw std::logic_error("a table from a checkpoint on a back end without checkpoints");
}

/// The end of step `step`: with --checkpoint-every N PATH, after every
/// N-th step the heap and the run's state go to PATH (replaced once the new
/// file is whole), with `counts()` (a std::vector<std::uint64_t>: the run's
/// counters outside the heap, read back on resume by saved_counts). Waits
/// for the step; the save counts towards no phase.
template <class Handle, class Counts>
void checkpoint_if_due(Handle& heap, const CheckpointOptions& c, const std::string& identity,
                       int step, support::PhaseTimer& timer, Counts&& counts) {
  if (c.every <= 0 || step % c.every != 0) return;
  if constexpr (kCanMoveObjects<typename Handle::Allocator>) {
    timer.pause();
    heap.save_checkpoint(std::filesystem::path(c.path), run_state(identity, step, counts()));
    timer.resume();
  }
}

/// checkpoint_if_due for a run whose state is all in the heap.
template <class Handle>
void checkpoint_if_due(Handle& heap, const CheckpointOptions& c, const std::string& identity,
                       int step, support::PhaseTimer& timer) {
  checkpoint_if_due(heap, c, identity, step, timer, [] { return std::vector<std::uint64_t>{}; });
}

}  // namespace dynasoar::example
