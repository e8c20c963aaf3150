// The unit that splits a node (Vinkler & Havran 2014, Sec. 6: "a warp is the unit of
// computation and thus only a single thread of a warp dynamically allocates
// memory"). The lanes of a warp that reach a level's split together take
// the warp's open nodes one after another; for each, every lane classifies
// and copies a share of the references, and the node's own lane (the
// leader) makes every allocation and hands the pointers to the others.
// Without this, one thread per node walks all references of the top levels
// alone (the root: every triangle, twice).
//
// The group is warp::present_lanes(): lanes that arrive later form a group
// of their own. Every lane of a group runs the same sequence of warp
// primitives with the group's mask, because all control flow inside a split
// depends only on values that are the same in every lane (the node's fields,
// ballot counts, pointers shuffled from the leader). On the host a warp is
// one lane, so the same code splits a node alone; `alone()` gives that group
// on the GPU too (--thread-per-node).
#pragma once

#include <cstdint>

#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/config.h"
#include "dynasoar/platform/warp.h"

namespace dynasoar::example::kdtree {

struct SplitGroup {
  platform::warp::lane_mask mask;  // the lanes that split together
  unsigned leader;                 // lane of the node being split; it allocates
  unsigned rank;                   // this lane's place among the group's lanes
  unsigned width;                  // lanes in the group

  /// The group of the calling lane alone.
  DYNASOAR_HD static SplitGroup alone() {
    const unsigned lane = platform::warp::lane_id();
    return SplitGroup{1u << lane, lane, 0u, 1u};
  }
  /// The lanes of `present` (warp::present_lanes()) splitting the node of lane `leader`.
  DYNASOAR_HD static SplitGroup of(platform::warp::lane_mask present, unsigned leader) {
    return SplitGroup{present, leader, static_cast<unsigned>(place(present)),
                      static_cast<unsigned>(platform::popc(static_cast<std::uint64_t>(present)))};
  }

  DYNASOAR_HD bool leads() const { return platform::warp::lane_id() == leader; }

  /// The leader's pointer, in every lane.
  template <class T>
  DYNASOAR_HD T* from_leader(T* p) const {
    const auto v = platform::warp::shfl(
        mask, static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(p)), leader);
    return reinterpret_cast<T*>(static_cast<std::uintptr_t>(v));
  }

  /// Lanes of the group whose predicate holds.
  DYNASOAR_HD platform::warp::lane_mask ballot(bool predicate) const {
    return platform::warp::ballot(mask, predicate);
  }
  /// The calling lane's place among the lanes of `lanes` (those below it).
  DYNASOAR_HD static int place(platform::warp::lane_mask lanes) {
    return platform::popc(static_cast<std::uint64_t>(lanes & platform::warp::lanes_below()));
  }
  DYNASOAR_HD static bool in(platform::warp::lane_mask lanes) {
    return ((lanes >> platform::warp::lane_id()) & 1u) != 0;
  }
};

}  // namespace dynasoar::example::kdtree
