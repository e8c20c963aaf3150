// The k-d tree build of Vinkler & Havran 2014 Sec. 6 ("[DS]") as the paper runs it: each
// node's triangle references are one array of exactly count * 4 bytes from
// the raw device API of an allocator of the CMalloc family or CUDA's malloc
// (`p = alloc.malloc(bytes)`, `alloc.free(p)`), so the requests vary in size
// by orders of magnitude (Table 3's mean and deviation). Nodes are plain
// structs in one array, numbered by an atomic counter, so the nodes of a
// level are a contiguous range and a level is one parallel loop over it.
// A node is split by the lanes of a warp together, one of them allocating,
// as in the paper (warp_group.h): they count its references per side with
// the shared rule (rules.h), the leader allocates both children's arrays,
// all copy the references, and the leader frees the node's own array.
//
// Built once per raw allocator (kdtree_raw_<allocator>): the target's
// DYNASOAR_BACKEND property picks the allocator, as for the object form.
#include <dynasoar/dynasoar.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dynasoar/allocator/raw/pool_handle.h"
#include "dynasoar/support/phase_timer.h"
#include "example/common/device_info.h"
#include "example/kdtree/kdtree.h"
#include "example/kdtree/rules.h"
#include "example/kdtree/warp_group.h"

namespace dynasoar::example::kdtree {
namespace {

// The raw allocator of the back end this program is built for. AtomicMalloc
// never frees: Vinkler & Havran 2014's lower bound on the build time.
static_assert(backend::KeepingRawBackend<backend::Selected>,
              "the raw k-d tree build needs a raw allocator whose memory stays valid until it is freed: "
              "a back end marked `raw keeps` in dynasoar/backend_list.h");
using Raw = backend::Selected::RawAllocator;

struct RawNode {
  Box cell;
  int* refs;  // count references, from the allocator (null if count is 0 or once split)
  int count;
  int depth;
  int axis;  // kOpen, kLeaf or 0..2
  float split;
  int left, right;
};

DYNASOAR_HD inline RawNode open_node(const Box& cell, int* refs, int count, int depth) {
  return RawNode{cell, refs, count, depth, kOpen, 0.0f, -1, -1};
}

/// The root: one array for all triangles (one thread), then filled in parallel.
struct MakeRoot {
  Raw alloc;
  RawNode* nodes;
  Box cell;
  int n;
  DYNASOAR_HD void operator()(std::size_t) const {
    auto* refs = static_cast<int*>(alloc.malloc(static_cast<std::uint64_t>(n) * sizeof(int)));
    nodes[0] = open_node(cell, refs, refs == nullptr ? 0 : n, 0);
  }
};
struct FillRoot {
  RawNode* nodes;
  DYNASOAR_HD void operator()(std::size_t i) const { nodes[0].refs[i] = static_cast<int>(i); }
};

/// Splits node begin + i (one level: the nodes [begin, begin + n)).
struct SplitLevel {
  Raw alloc;
  const Box* bounds;
  RawNode* nodes;
  BuildCounters* counters;
  unsigned long long begin;
  unsigned long long capacity;
  int leaf_size;
  int max_depth;
  bool warp_per_node;  // false: every lane splits its node alone

  DYNASOAR_HD void leaf(RawNode& nd, std::size_t at) const {
    nd.axis = kLeaf;
    nodes[at] = nd;
    platform::atomic_fetch_add(&counters->leaf_refs, static_cast<unsigned long long>(nd.count));
  }
  DYNASOAR_HD int* array(int n) const {  // a child's reference array, counted
    if (n == 0) return nullptr;
    const auto bytes = static_cast<unsigned long long>(n) * sizeof(int);
    auto* p = static_cast<int*>(alloc.malloc(bytes));
    if (p == nullptr) {
      platform::atomic_fetch_add(&counters->failed, 1ull);
      return nullptr;
    }
    platform::atomic_fetch_add(&counters->arrays, 1ull);
    platform::atomic_fetch_add(&counters->array_bytes, bytes);
    platform::atomic_fetch_add(&counters->array_bytes_sq, bytes * bytes);
    platform::atomic_fetch_add(&counters->requests, 1ull);
    platform::atomic_fetch_add(&counters->request_bytes, bytes);
    return p;
  }

  DYNASOAR_HD void operator()(std::size_t i) const {
    // Every lane that reaches this together takes part (see warp_group.h).
    const platform::warp::lane_mask present = platform::warp::present_lanes();
    const std::size_t at = begin + i;
    RawNode nd = nodes[at];
    bool wants = false;
    if (stop_before_split(nd.count, nd.depth, leaf_size, max_depth))
      leaf(nd, at);
    else
      wants = true;
    if (!warp_per_node) {
      if (wants) split_by(SplitGroup::alone(), at);
      return;
    }
    for (platform::warp::lane_mask m = platform::warp::ballot(present, wants); m != 0; m &= m - 1) {
      const SplitGroup g = SplitGroup::of(present, static_cast<unsigned>(platform::ctz(m)));
      const auto node = static_cast<std::size_t>(
          platform::warp::shfl(present, static_cast<unsigned long long>(at), g.leader));
      split_by(g, node);
    }
  }

  /// Splits node `at` with the lanes of g (each lane sees the same node).
  DYNASOAR_HD void split_by(const SplitGroup& g, std::size_t at) const {
    RawNode nd = nodes[at];
    const int ax = longest_axis(nd.cell);
    const float s = split_position(nd.cell, ax);
    const auto width = static_cast<int>(g.width);
    int nl = 0, nr = 0;
    for (int base = 0; base < nd.count; base += width) {
      const int j = base + static_cast<int>(g.rank);
      const unsigned side = j < nd.count ? classify(bounds[nd.refs[j]], ax, s) : 0u;
      nl += platform::popc(static_cast<std::uint64_t>(g.ballot((side & kLeftSide) != 0)));
      nr += platform::popc(static_cast<std::uint64_t>(g.ballot((side & kRightSide) != 0)));
    }
    if (split_is_useless(nd.count, nl, nr)) {
      if (g.leads()) leaf(nd, at);
      return;
    }
    int* l = nullptr;
    int* r = nullptr;
    int failed = 0;
    if (g.leads()) {  // one thread of the group allocates (Sec. 6)
      l = array(nl);
      r = array(nr);
      failed = (nl != 0 && l == nullptr) || (nr != 0 && r == nullptr) ? 1 : 0;
    }
    if (platform::warp::shfl(g.mask, failed, g.leader) != 0) return;  // reported by the host
    l = g.from_leader(l);
    r = g.from_leader(r);
    int fl = 0, fr = 0;
    for (int base = 0; base < nd.count; base += width) {
      const int j = base + static_cast<int>(g.rank);
      const int t = j < nd.count ? nd.refs[j] : -1;
      const unsigned side = j < nd.count ? classify(bounds[t], ax, s) : 0u;
      const platform::warp::lane_mask lm = g.ballot((side & kLeftSide) != 0);
      const platform::warp::lane_mask rm = g.ballot((side & kRightSide) != 0);
      if ((side & kLeftSide) != 0) l[fl + SplitGroup::place(lm)] = t;
      if ((side & kRightSide) != 0) r[fr + SplitGroup::place(rm)] = t;
      fl += platform::popc(static_cast<std::uint64_t>(lm));
      fr += platform::popc(static_cast<std::uint64_t>(rm));
    }
    // Every lane has read the parent's array (the ballots above wait for it).
    if (!g.leads()) return;
    alloc.free(nd.refs);  // Sec. 6: the parent's array goes once split
    const unsigned long long first = platform::atomic_fetch_add(&counters->nodes, 2ull);
    if (first + 2 > capacity) {  // the host sizes the array so that this cannot happen
      platform::atomic_fetch_add(&counters->failed, 1ull);
      return;
    }
    nodes[first] = open_node(child_cell(nd.cell, ax, s, kLeftSide), l, nl, nd.depth + 1);
    nodes[first + 1] = open_node(child_cell(nd.cell, ax, s, kRightSide), r, nr, nd.depth + 1);
    nd.refs = nullptr;
    nd.axis = ax;
    nd.split = s;
    nd.left = static_cast<int>(first);
    nd.right = static_cast<int>(first + 1);
    nodes[at] = nd;
  }
};

struct CopyNodes {
  const RawNode* from;
  RawNode* to;
  DYNASOAR_HD void operator()(std::size_t i) const { to[i] = from[i]; }
};

/// Leaf i's references to out[offset[i]...] (untimed export).
struct GatherLeaves {
  const RawNode* nodes;
  const std::int64_t* offset;
  int* out;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const RawNode& nd = nodes[i];
    if (nd.axis != kLeaf) return;
    for (int j = 0; j < nd.count; ++j) out[offset[i] + j] = nd.refs[j];
  }
};

struct FreeLeaves {
  Raw alloc;
  const RawNode* nodes;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (nodes[i].axis == kLeaf && nodes[i].refs != nullptr) alloc.free(nodes[i].refs);
  }
};

/// Bytes of the largest chunk of a fresh pool of `bytes`: for the circular
/// allocators the root chunk of the pre-split pattern (Vinkler & Havran 2014, Eq. 1; one
/// pattern per multiprocessor for CMMalloc and CFMMalloc), else the pool.
template <class A = Raw>  // a template, so that the discarded branch may name what A lacks
std::uint64_t largest_chunk(std::uint64_t bytes) {
  if constexpr (cmalloc::kIsCircular<A>) {
    const std::uint32_t heaps = A::kMultiOffset ? platform::processors() : 1u;
    const cmalloc::PreSplit p = cmalloc::PreSplit::plan(
        bytes / raw::kAlignment, heaps,
        static_cast<std::uint32_t>((raw::PoolOptions{}.min_chunk_bytes + raw::kAlignment - 1) /
                                   raw::kAlignment));
    return static_cast<std::uint64_t>(p.root) * raw::kAlignment;
  } else {
    return bytes;
  }
}

/// The pool: --heap-mib or the default, which grows until a fresh pool can
/// serve the root array at all. Chunks merge only on free (Sec. 5), so a
/// request larger than every pre-split chunk fails however empty the pool
/// is; with one pattern per multiprocessor, that happens to the root array
/// of a few hundred thousand triangles in the default pool.
std::uint64_t pool_bytes(const Config& c, std::uint64_t n) {
  const std::uint64_t need = 4 * n + raw::kAlignment;  // the array and its chunk header
  const std::uint64_t given = c.heap_bytes != 0 ? c.heap_bytes : default_heap_bytes(n);
  if (largest_chunk(given) >= need) return given;
  const std::uint64_t most = cmalloc::kMaxGranules * raw::kAlignment;  // 31-bit offsets
  std::uint64_t enough = given;
  while (largest_chunk(enough) < need && enough * 2 <= most) enough *= 2;
  if (c.heap_bytes == 0 && largest_chunk(enough) >= need) return enough;
  throw std::invalid_argument(
      std::string(Raw::kName) + ": the largest chunk of a fresh pool of " +
      std::to_string(given >> 20) + " MiB is " + std::to_string(largest_chunk(given)) +
      " bytes, the root array needs " + std::to_string(need) +
      (largest_chunk(enough) >= need
           ? "; give --heap-mib " + std::to_string((enough >> 20) + 1) + " or more"
           : "; the scene is too large for this allocator"));
}

}  // namespace

RunReport run(const Config& c) {
  const std::vector<Triangle> tris = make_scene(c);
  const std::vector<Box> bounds = triangle_bounds(tris);
  const Box scene = scene_bounds(bounds);
  const std::size_t n = tris.size();
  raw::PoolHandle<Raw> pool(pool_bytes(c, n));
  platform::Stream stream;
  platform::Buffer<Box> dbounds(n);
  dbounds.copy_from_host(bounds.data(), n, 0, stream);
  BuildCounters init{};
  init.nodes = 1;
  init.arrays = 1;
  init.array_bytes = 4ull * n;
  init.array_bytes_sq = init.array_bytes * init.array_bytes;
  init.requests = 1;
  init.request_bytes = 4ull * n;
  platform::Buffer<BuildCounters> counters(1);
  counters.copy_from_host(&init, 1, 0, stream);
  std::size_t capacity = 1024;
  platform::Buffer<RawNode> nodes(capacity);
  platform::synchronize(stream);

  auto check = [&](const BuildCounters& k) {
    if (k.failed != 0) {
      pool.clear_errors();
      throw OutOfMemory(std::string("k-d tree: the ") + Raw::kName + " pool of " +
                        std::to_string(pool.bytes() >> 20) + " MiB is out of memory (" +
                        std::to_string(k.failed) +
                        " reference arrays did not fit); give a larger --heap-mib");
    }
  };

  support::PhaseTimer timer(stream);
  timer.start();
  platform::parallel_for(1, MakeRoot{pool.device(), nodes.data(), scene, static_cast<int>(n)},
                         stream);
  platform::parallel_for(n, FillRoot{nodes.data()}, stream);
  timer.mark("root");
  if (pool.out_of_memory()) {
    BuildCounters k{};
    k.failed = 1;
    check(k);
  }
  std::size_t begin = 0, end = 1;
  for (int level = 0; begin < end; ++level) {
    // Room for two children of every node of this level.
    if (end + 2 * (end - begin) > capacity) {
      timer.mark("split levels");
      const std::size_t grown = std::max(2 * capacity, end + 2 * (end - begin));
      platform::Buffer<RawNode> bigger(grown);
      platform::parallel_for(end, CopyNodes{nodes.data(), bigger.data()}, stream);
      platform::synchronize(stream);
      nodes = std::move(bigger);
      capacity = grown;
      timer.mark("node array growth");
    }
    platform::parallel_for(end - begin,
                           SplitLevel{pool.device(), dbounds.data(), nodes.data(), counters.data(),
                                      begin, capacity, c.leaf_size, c.max_depth, c.warp_per_node},
                           stream);
    timer.mark("split levels");
    const BuildCounters k = counters.to_vector(stream)[0];
    check(k);
    begin = end;
    end = static_cast<std::size_t>(k.nodes);
    if (c.on_level) c.on_level(level);
  }

  BuildResult res;
  res.total_ms = timer.total_ms();
  res.phases_ms = timer.phases_ms();
  res.counters = counters.to_vector(stream)[0];
  if (res.counters.nodes >= (1ull << 31))
    throw std::runtime_error("k-d tree: more than 2^31 nodes");
  // The tree, copied out for the checks (untimed); then the leaves' arrays go.
  {
    const std::vector<RawNode> host = nodes.to_vector(stream);
    const auto used = static_cast<std::size_t>(res.counters.nodes);
    std::vector<std::int64_t> offset(used, 0);
    std::int64_t total = 0;
    res.tree.nodes.resize(used);
    for (std::size_t i = 0; i < used; ++i) {
      const RawNode& nd = host[i];
      TreeNode& t = res.tree.nodes[i];
      t.cell = nd.cell;
      t.depth = nd.depth;
      t.axis = nd.axis;
      t.split = nd.split;
      t.left = nd.left;
      t.right = nd.right;
      t.count = nd.axis == kLeaf ? nd.count : 0;
      if (nd.axis == kLeaf) {
        offset[i] = total;
        t.first = total;
        total += nd.count;
      }
    }
    platform::Buffer<std::int64_t> doffset(std::max<std::size_t>(used, 1));
    doffset.copy_from_host(offset.data(), used, 0, stream);
    platform::Buffer<int> refs(std::max<std::size_t>(1, static_cast<std::size_t>(total)));
    platform::parallel_for(used, GatherLeaves{nodes.data(), doffset.data(), refs.data()}, stream);
    res.tree.refs = refs.to_vector(stream);
    res.tree.refs.resize(static_cast<std::size_t>(total));
    platform::parallel_for(used, FreeLeaves{pool.device(), nodes.data()}, stream);
    platform::synchronize(stream);
  }
  res.live = {{"nodes", res.counters.nodes}};
  res.heap.emplace_back("pool", std::to_string(pool.bytes() >> 20) + " MiB");
  return finish_build(c, tris, std::move(res), std::string("raw ") + Raw::kName,
                      device_description());
}

}  // namespace dynasoar::example::kdtree
