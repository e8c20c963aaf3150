// The k-d tree build of Vinkler & Havran 2014 Sec. 6 ("[DS] Data structure build") as
// an SMMO program: tree nodes are Node objects, and a node's triangle
// references are a chain of fixed-size RefChunk objects (the object
// allocators have no variable-size request, so the paper's one array per
// node becomes a linked list of 32-reference chunks). The build runs top
// down, one parallel_do per level over all nodes: an open node (made in the
// previous level) classifies its references with the shared rule
// (rules.h), creates its two children and their chunks with `new` in device
// code, and destroys its own chunks; finished nodes only lend their lanes,
// and the children made during a do-all are not visited until the next one.
// As in the paper, the lanes of a warp split their open nodes together, one
// node after another (warp_group.h); the node's own lane makes the
// children, the lanes allocate the chunks together (ChunkWriter) and
// destroy the parent's in turn; a chunk holds 32 references, one per lane.
//
// One warp per node leaves the top levels, few nodes with many references
// each, to a few warps. A node with at least Config::wide_refs references
// is therefore split by segments: its chunk list is cut into runs of
// kSegmentChunks chunks (a chunk knows its place in the chain that made
// it), and in do-alls over RefChunk the first chunk of each run has its warp
// count, then copy, that run's references into chains of new chunks, which
// are prepended to the children's lists; then every chunk of a split node
// destroys itself. The children's references are then not in the
// parent's order, which changes nothing in the tree.
// The same source is built for every back end that can free (kdtree_<back end>).
#include <dynasoar/dynasoar.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dynasoar/support/phase_timer.h"
#include "example/common/device_info.h"
#include "example/common/make_heap.h"
#include "example/kdtree/kdtree.h"
#include "example/kdtree/rules.h"
#include "example/kdtree/warp_group.h"

namespace dynasoar::example::kdtree {
namespace {

class Node;
class RefChunk;
using AllocatorT = dynasoar::Allocator<Node, RefChunk>;

// Bytes of the objects' fields, for the count of requested bytes.
constexpr unsigned long long kChunkBytes = 2 * sizeof(void*) + 2 * sizeof(int) + sizeof(int) * kChunkRefs;
constexpr unsigned long long kNodeBytes =
    sizeof(Box) + 3 * sizeof(void*) + sizeof(float) + 6 * sizeof(int);

enum : int {
  kSegmentChunks = 64,  // chunks per segment of a wide split
  kCounting = -3,       // Node::axis of a wide node while its segments count its references
};

/// What a split needs besides the node (passed to every do-all by value).
struct Build {
  const Box* bounds;  // per triangle
  BuildCounters* counters;
  int leaf_size;
  int max_depth;
  bool warp_per_node;  // false: every lane splits its node alone
  int wide_refs;       // nodes with at least this many references split by segments (0: none)
  unsigned long long* wide_nodes;  // nodes that began a wide split in this level
  AllocatorT alloc;
};

/// Where the tree goes for the host's checks (objects.cpp's export).
struct Export {
  TreeNode* nodes;  // indexed by Node::id
  int* refs;        // the leaves' references, packed
  unsigned long long* cursor;
};

class RefChunk : public AllocatorT::Base {
 public:
  // clang-format off
  declare_field_types(RefChunk, RefChunk*, int, int[kChunkRefs], Node*, int)
  Field<RefChunk, 0> next;
  Field<RefChunk, 1> size;  // references used, at most kChunkRefs
  Field<RefChunk, 2> ids;
  Field<RefChunk, 3> owner;  // the node whose references these are
  Field<RefChunk, 4> index;  // place in the chain that made it (0, 1, ...)
  // clang-format on

  DYNASOAR_HD RefChunk(Node* o, int i) : next(nullptr), size(0), owner(o), index(i) {}
  /// The root's chunk i of `n` references (parallel_new): triangles
  /// i * kChunkRefs, ...; table[i] is this chunk (RootChunks links them and
  /// sets their owner).
  DYNASOAR_HD RefChunk(int i, int n, RefChunk** table) : next(nullptr), size(0), owner(nullptr), index(i) {
    const int first = i * kChunkRefs;
    const int m = n - first < kChunkRefs ? n - first : kChunkRefs;
    for (int j = 0; j < m; ++j) ids[j] = first + j;
    size = m;
    table[i] = this;
  }

  /// Whether a segment of a wide split begins here: every kSegmentChunks-th
  /// chunk of the chain that made it (so a list prepended from several
  /// chains has a segment start at each chain's head).
  DYNASOAR_HD bool starts_segment() const { return index % kSegmentChunks == 0; }

  DYNASOAR_HD void count_segment(Build b);
  DYNASOAR_HD void write_segment(Build b);
  DYNASOAR_HD void retire(Build b);
};

/// The root's chunks, one after another, all owned by the root.
struct RootChunks {
  RefChunk** table;
  std::size_t chunks;
  Node* const* root;
  DYNASOAR_HD void operator()(std::size_t i) const {
    table[i]->next = i + 1 < chunks ? table[i + 1] : nullptr;
    table[i]->owner = *root;
  }
};

/// A reference list being written by a split group: every lane holds the
/// same head, tail and fill; a batch of references from the group's lanes
/// is appended in lane order, and a new chunk is started when the last one
/// overflows (one at most per batch: a group has at most 32 lanes, a chunk
/// 32 slots). The list takes exactly ceil(refs / 32) chunks, so the lanes
/// allocate them ahead, up to one each at a time: requests made together
/// are served together (the allocators coalesce a warp's requests), where
/// one lane would make them one after another.
struct ChunkWriter {
  RefChunk* head = nullptr;
  RefChunk* tail = nullptr;
  int fill = 0;
  int needed = 0;             // chunks the list takes in all
  int taken = 0;              // chunks started so far
  int stock = 0;              // chunks allocated ahead in the current round (one per lane)
  int used = 0;               // of those, taken
  RefChunk* spare = nullptr;  // this lane's chunk of the round (the only per-lane value)
  Node* owner;                // the node the list is for

  DYNASOAR_HD ChunkWriter(int refs, Node* o) : needed((refs + kChunkRefs - 1) / kChunkRefs), owner(o) {}

  /// The next chunk, the same in every lane; nullptr if the heap is full.
  DYNASOAR_HD RefChunk* next_chunk(const SplitGroup& g, const Build& b) {
    if (used == stock) {  // a new round: lanes 0 .. stock - 1 of the group allocate
      const int left = needed - taken;
      stock = left < static_cast<int>(g.width) ? left : static_cast<int>(g.width);
      used = 0;
      spare = nullptr;
      if (static_cast<int>(g.rank) < stock) {
        spare = new (b.alloc) RefChunk(owner, taken + static_cast<int>(g.rank));
        if (spare != nullptr) {
          platform::atomic_fetch_add(&b.counters->requests, 1ull);
          platform::atomic_fetch_add(&b.counters->request_bytes, kChunkBytes);
        }
      }
      if (g.ballot(static_cast<int>(g.rank) < stock && spare == nullptr) != 0 || stock <= 0)
        return nullptr;
    }
    const platform::warp::lane_mask holder = g.ballot(static_cast<int>(g.rank) == used);
    RefChunk* c = SplitGroup{g.mask, static_cast<unsigned>(platform::ctz(holder)), g.rank, g.width}
                      .from_leader(spare);
    ++used;
    ++taken;
    return c;
  }

  /// Appends `id` of each lane in `lanes`. False if the heap is full (the
  /// do-all's check reports it); the same in every lane.
  DYNASOAR_HD bool append(const SplitGroup& g, platform::warp::lane_mask lanes, int id,
                          const Build& b) {
    const int n = platform::popc(static_cast<std::uint64_t>(lanes));
    if (n == 0) return true;
    const int space = tail == nullptr ? 0 : kChunkRefs - fill;
    RefChunk* fresh = nullptr;
    if (n > space) {
      fresh = next_chunk(g, b);
      if (fresh == nullptr) return false;
    }
    if (SplitGroup::in(lanes)) {
      const int at = SplitGroup::place(lanes);
      if (at < space)
        tail->ids[fill + at] = id;
      else
        fresh->ids[at - space] = id;
    }
    if (fresh == nullptr) {
      fill += n;
      return true;
    }
    if (g.leads() && tail != nullptr) {
      tail->size = kChunkRefs;
      tail->next = fresh;
    }
    if (head == nullptr) head = fresh;
    tail = fresh;
    fill = n - space;
    return true;
  }
  DYNASOAR_HD void close(const SplitGroup& g) {
    if (g.leads() && tail != nullptr) tail->size = fill;
  }
};

/// Calls f(id) in every lane of g for the references of the chunks from
/// `first` on, g.width at a time (id -1 in the lanes past a chunk's end), so
/// that every lane makes the same calls. With `segment`, stops before the
/// next chunk that starts a segment. Stops early, returning false, when f
/// returns false (which it must do in every lane alike).
template <class F>
DYNASOAR_HD bool for_each_batch(const SplitGroup& g, RefChunk* first, bool segment, F&& f) {
  for (RefChunk* k = first; k != nullptr; k = k->next) {
    if (segment && k != first && k->starts_segment()) break;
    const int m = k->size;
    for (int base = 0; base < m; base += static_cast<int>(g.width)) {
      const int j = base + static_cast<int>(g.rank);
      if (!f(j < m ? static_cast<int>(k->ids[j]) : -1)) return false;
    }
  }
  return true;
}

/// References per side of the plane (ax, s) among those of for_each_batch(g, first, segment).
struct SideCounts {
  int left = 0;
  int right = 0;
};
DYNASOAR_HD inline SideCounts count_sides(const SplitGroup& g, RefChunk* first, bool segment, const Build& b,
                                          int ax, float s) {
  SideCounts n;
  for_each_batch(g, first, segment, [&](int t) {
    const unsigned side = t >= 0 ? classify(b.bounds[t], ax, s) : 0u;
    n.left += platform::popc(static_cast<std::uint64_t>(g.ballot((side & kLeftSide) != 0)));
    n.right += platform::popc(static_cast<std::uint64_t>(g.ballot((side & kRightSide) != 0)));
    return true;
  });
  return n;
}
/// Copies those references into the writers of the two sides, in order,
/// and closes them. False if the heap is full (the same in every lane).
DYNASOAR_HD inline bool write_sides(const SplitGroup& g, RefChunk* first, bool segment, const Build& b, int ax,
                                    float s, ChunkWriter& wl, ChunkWriter& wr) {
  const bool done = for_each_batch(g, first, segment, [&](int t) {
    const unsigned side = t >= 0 ? classify(b.bounds[t], ax, s) : 0u;
    return wl.append(g, g.ballot((side & kLeftSide) != 0), t, b) &&
           wr.append(g, g.ballot((side & kRightSide) != 0), t, b);
  });
  if (!done) return false;
  wl.close(g);
  wr.close(g);
  return true;
}

class Node : public AllocatorT::Base {
 public:
  // clang-format off
  declare_field_types(Node, Box, RefChunk*, Node*, Node*, float, int, int, int, int, int, int)
  Field<Node, 0> cell;
  Field<Node, 1> refs;  // first chunk (null once split, or for an empty node)
  Field<Node, 2> left;
  Field<Node, 3> right;
  Field<Node, 4> split;  // the plane's position on `axis`
  Field<Node, 5> count;  // references
  Field<Node, 6> depth;
  Field<Node, 7> id;    // 0 .. nodes - 1 from an atomic counter (differs between runs)
  Field<Node, 8> axis;  // kOpen, kLeaf, kCounting, or the split axis 0..2
  Field<Node, 9> left_refs;   // a wide split: references counted for each side
  Field<Node, 10> right_refs;

  /// The root (parallel_new of one): all n triangles in the chunks of
  /// `table`; *self is this node.
  DYNASOAR_HD Node(int, Box c, RefChunk** table, int n, Node** self)
      : cell(c),
        refs(n > 0 ? table[0] : nullptr),
        left(nullptr),
        right(nullptr),
        split(0.0f),
        count(n),
        depth(0),
        id(0),
        axis(kOpen),
        left_refs(0),
        right_refs(0) {
    *self = this;
  }
  /// A child, open until the next level's do-all.
  DYNASOAR_HD Node(const Box& c, int d, int i)
      : cell(c),
        refs(nullptr),
        left(nullptr),
        right(nullptr),
        split(0.0f),
        count(0),
        depth(d),
        id(i),
        axis(kOpen),
        left_refs(0),
        right_refs(0) {}

  DYNASOAR_HD void split_level(Build b);
  DYNASOAR_HD void open_wide(Build b);
  DYNASOAR_HD void export_to(Export e);

 private:
  DYNASOAR_HD void split_by(const SplitGroup& g, const Build& b);
  /// Makes both children (with their reference counts; lists empty) and
  /// records the split; false if the heap is full. One thread.
  DYNASOAR_HD bool make_children(const Build& b, int ax, float s, int nl, int nr, Node** l, Node** r);
  DYNASOAR_HD void become_leaf(const Build& b) {
    axis = kLeaf;
    platform::atomic_fetch_add(&b.counters->leaf_refs,
                               static_cast<unsigned long long>(static_cast<int>(count)));
  }
};

/// Counts a child's reference array as the paper's raw form would allocate it.
DYNASOAR_HD inline void count_array(const Build& b, int n) {
  if (n == 0) return;
  const auto bytes = static_cast<unsigned long long>(n) * sizeof(int);
  platform::atomic_fetch_add(&b.counters->arrays, 1ull);
  platform::atomic_fetch_add(&b.counters->array_bytes, bytes);
  platform::atomic_fetch_add(&b.counters->array_bytes_sq, bytes * bytes);
}

DYNASOAR_HD void Node::split_level(Build b) {
  // Every lane that reaches this together takes part, open node or not.
  const platform::warp::lane_mask present = platform::warp::present_lanes();
  bool wants = false;
  if (axis == kOpen) {  // else finished in an earlier level
    if (stop_before_split(count, depth, b.leaf_size, b.max_depth)) {
      become_leaf(b);
    } else if (b.wide_refs > 0 && count >= b.wide_refs) {  // split by segments (open_wide)
      axis = kCounting;
      platform::atomic_fetch_add(b.wide_nodes, 1ull);
    } else {
      wants = true;
    }
  }
  if (!b.warp_per_node) {
    if (wants) split_by(SplitGroup::alone(), b);
    return;
  }
  // The warp's open nodes one after another, each split by all its lanes.
  for (platform::warp::lane_mask m = platform::warp::ballot(present, wants); m != 0; m &= m - 1) {
    const SplitGroup g = SplitGroup::of(present, static_cast<unsigned>(platform::ctz(m)));
    g.from_leader(this)->split_by(g, b);
  }
}

DYNASOAR_HD bool Node::make_children(const Build& b, int ax, float s, int nl, int nr, Node** l, Node** r) {
  const Box c = cell;
  const int first = static_cast<int>(platform::atomic_fetch_add(&b.counters->nodes, 2ull));
  *l = new (b.alloc) Node(child_cell(c, ax, s, kLeftSide), depth + 1, first);
  *r = new (b.alloc) Node(child_cell(c, ax, s, kRightSide), depth + 1, first + 1);
  platform::atomic_fetch_add(&b.counters->requests, 2ull);
  platform::atomic_fetch_add(&b.counters->request_bytes, 2 * kNodeBytes);
  if (*l == nullptr || *r == nullptr) return false;  // the heap is full: parallel_do throws
  (*l)->count = nl;
  (*r)->count = nr;
  count_array(b, nl);
  count_array(b, nr);
  left = *l;
  right = *r;
  split = s;
  axis = ax;
  return true;
}

/// Splits this node with the lanes of g (each lane sees the same node).
DYNASOAR_HD void Node::split_by(const SplitGroup& g, const Build& b) {
  const int n = count;
  const Box c = cell;
  const int ax = longest_axis(c);
  const float s = split_position(c, ax);
  RefChunk* const list = refs;
  // First pass: how many references each side gets.
  const SideCounts sides = count_sides(g, list, false, b, ax, s);
  if (split_is_useless(n, sides.left, sides.right)) {
    if (g.leads()) become_leaf(b);
    return;
  }
  Node* l = nullptr;
  Node* r = nullptr;
  if (g.leads()) make_children(b, ax, s, sides.left, sides.right, &l, &r);
  l = g.from_leader(l);
  r = g.from_leader(r);
  if (l == nullptr || r == nullptr) return;  // the heap is full: parallel_do throws
  // Second pass: copy the references into the children's chunks, in order.
  ChunkWriter wl(sides.left, l), wr(sides.right, r);
  if (!write_sides(g, list, false, b, ax, s, wl, wr)) return;
  // The parent's references are no longer needed (Sec. 6: freed once
  // split). The lanes take turns destroying its chunks; each chunk goes
  // only after every lane has read its successor (the ballot).
  int turn = 0;
  for (RefChunk* k = list; k != nullptr; ++turn) {
    RefChunk* next = k->next;
    g.ballot(true);
    if (turn % static_cast<int>(g.width) == static_cast<int>(g.rank)) dynasoar::destroy(b.alloc, k);
    k = next;
  }
  if (!g.leads()) return;
  l->refs = wl.head;
  r->refs = wr.head;
  refs = nullptr;
}

/// A wide split, after its segments counted: a leaf if the split is
/// useless (the references stay), else the children with their counts. The
/// segments then fill the children (RefChunk::write_segment). One thread.
DYNASOAR_HD void Node::open_wide(Build b) {
  if (axis != kCounting) return;
  const int n = count, nl = left_refs, nr = right_refs;
  if (split_is_useless(n, nl, nr)) {
    become_leaf(b);
    return;
  }
  const Box c = cell;
  const int ax = longest_axis(c);
  Node* l = nullptr;
  Node* r = nullptr;
  if (make_children(b, ax, split_position(c, ax), nl, nr, &l, &r)) refs = nullptr;  // the chunks retire later
}

/// The segments that begin at the calling lanes' chunks and belong to nodes
/// for which `wanted(node)` holds, one after another, each with every lane
/// present: f(group, first chunk, node).
template <class Wanted, class F>
DYNASOAR_HD void for_each_segment(RefChunk* self, Wanted&& wanted, F&& f) {
  const platform::warp::lane_mask present = platform::warp::present_lanes();
  const Node* o = self->owner;
  const bool wants = o != nullptr && self->starts_segment() && wanted(*o);
  for (platform::warp::lane_mask m = platform::warp::ballot(present, wants); m != 0; m &= m - 1) {
    const SplitGroup g = SplitGroup::of(present, static_cast<unsigned>(platform::ctz(m)));
    RefChunk* first = g.from_leader(self);
    f(g, first, static_cast<Node*>(first->owner));
  }
}

/// A wide split's first pass: each segment adds its counts to the node's.
DYNASOAR_HD void RefChunk::count_segment(Build b) {
  for_each_segment(this, [](const Node& o) { return o.axis == kCounting; },
                   [&](const SplitGroup& g, RefChunk* first, Node* node) {
                     const Box c = node->cell;
                     const int ax = longest_axis(c);
                     const SideCounts n = count_sides(g, first, true, b, ax, split_position(c, ax));
                     if (g.leads()) {
                       platform::atomic_fetch_add(&node->left_refs, n.left);
                       platform::atomic_fetch_add(&node->right_refs, n.right);
                     }
                   });
}

/// A wide split's second pass: each segment copies its references into new
/// chains for the children and prepends them to the children's lists.
DYNASOAR_HD void RefChunk::write_segment(Build b) {
  // A split node that still has chunks is one of this level's wide splits:
  // the others destroy theirs as they split.
  for_each_segment(this, [](const Node& o) { return o.axis >= 0; },
                   [&](const SplitGroup& g, RefChunk* first, Node* node) {
                     const int ax = node->axis;
                     const float s = node->split;
                     Node* l = node->left;
                     Node* r = node->right;
                     const SideCounts n = count_sides(g, first, true, b, ax, s);
                     ChunkWriter wl(n.left, l), wr(n.right, r);
                     if (!write_sides(g, first, true, b, ax, s, wl, wr) || !g.leads()) return;
                     const auto prepend = [](const ChunkWriter& w) {
                       if (w.head != nullptr) w.tail->next = platform::atomic_exchange(&w.owner->refs, w.head);
                     };
                     prepend(wl);
                     prepend(wr);
                   });
}

/// After write_segment: a chunk of a split node destroys itself.
DYNASOAR_HD void RefChunk::retire(Build b) {
  const Node* o = owner;
  if (o != nullptr && o->axis >= 0) dynasoar::destroy(b.alloc, this);
}

DYNASOAR_HD void Node::export_to(Export e) {
  TreeNode& o = e.nodes[static_cast<int>(id)];
  o.cell = cell;
  o.depth = depth;
  o.axis = axis;
  o.split = split;
  o.count = count;
  o.first = 0;
  if (o.axis != kLeaf) {
    const Node* l = left;
    const Node* r = right;
    o.left = l->id;
    o.right = r->id;
    o.count = 0;
    return;
  }
  o.left = o.right = -1;
  const auto first = platform::atomic_fetch_add(e.cursor, static_cast<unsigned long long>(o.count));
  o.first = static_cast<std::int64_t>(first);
  int* out = e.refs + first;
  for (RefChunk* k = refs; k != nullptr; k = k->next) {
    const int m = k->size;
    for (int j = 0; j < m; ++j) *out++ = k->ids[j];
  }
}

}  // namespace

RunReport run(const Config& c) {
  const std::vector<Triangle> tris = make_scene(c);
  const std::vector<Box> bounds = triangle_bounds(tris);
  const Box scene = scene_bounds(bounds);
  const std::size_t n = tris.size();
  using Handle = dynasoar::AllocatorHandle<AllocatorT>;
  // Registry room per class (byte allocators): the registry grows only
  // between do-alls, and a level may add twice its open nodes; a tree has
  // about three nodes per triangle.
  Handle heap = make_heap<Handle>(c.heap_bytes != 0 ? c.heap_bytes : default_heap_bytes(n),
                                  8 * static_cast<std::uint64_t>(n) + (std::uint64_t{1} << 16));
  const platform::Stream stream = heap.stream();
  platform::Buffer<Box> dbounds(n);
  dbounds.copy_from_host(bounds.data(), n, 0, stream);
  const std::size_t chunks = (n + kChunkRefs - 1) / kChunkRefs;
  platform::Buffer<RefChunk*> table(chunks);
  platform::Buffer<Node*> root(1);
  platform::Buffer<unsigned long long> wide(1);  // nodes that began a wide split in a level
  BuildCounters init{};
  init.nodes = 1;  // the root
  init.arrays = 1;
  init.array_bytes = 4ull * n;
  init.array_bytes_sq = init.array_bytes * init.array_bytes;
  init.requests = chunks + 1;
  init.request_bytes = chunks * kChunkBytes + kNodeBytes;
  platform::Buffer<BuildCounters> counters(1);
  counters.copy_from_host(&init, 1, 0, stream);
  platform::synchronize(stream);

  support::PhaseTimer timer(stream);
  const double enumeration_before = enumeration_seconds(heap);
  timer.start();
  try {
    heap.parallel_new<RefChunk>(chunks, static_cast<int>(n), table.data());
    heap.parallel_new<Node>(1, scene, table.data(), static_cast<int>(n), root.data());
    platform::parallel_for(chunks, RootChunks{table.data(), chunks, root.data()}, stream);
    timer.mark("root");
    // --thread-per-node means one thread per node, wide ones included.
    const Build b{dbounds.data(),  counters.data(), c.leaf_size,  c.max_depth, c.warp_per_node,
                  c.warp_per_node ? c.wide_refs : 0, wide.data(), heap.device()};
    unsigned long long made = 1, before = 0;
    for (int level = 0; made != before; ++level) {
      before = made;
      wide.zero(stream);
      heap.parallel_do<Node, &Node::split_level>(b);
      if (wide.to_vector(stream)[0] != 0) {  // nodes split by segments: four more do-alls
        heap.parallel_do<RefChunk, &RefChunk::count_segment>(b);
        heap.parallel_do<Node, &Node::open_wide>(b);
        heap.parallel_do<RefChunk, &RefChunk::write_segment>(b);
        heap.parallel_do<RefChunk, &RefChunk::retire>(b);
      }
      timer.mark("split levels");
      made = counters.to_vector(stream)[0].nodes;
      if (c.on_level) c.on_level(level);
    }
  } catch (const OutOfMemory& e) {
    throw OutOfMemory(std::string(e.what()) + " (k-d tree of " + std::to_string(n) +
                      " triangles in " + std::to_string(heap.heap_bytes() >> 10) +
                      " KiB: give a larger --heap-mib)");
  }

  BuildResult res;
  res.total_ms = timer.total_ms();
  res.phases_ms = timer.phases_ms();
  if constexpr (HasRegistry<Handle>)
    res.extra_ms.emplace_back("registry enumeration (host clock)",
                              (enumeration_seconds(heap) - enumeration_before) * 1e3);
  res.counters = counters.to_vector(stream)[0];
  if (res.counters.nodes >= (1ull << 31))
    throw std::runtime_error("k-d tree: more than 2^31 nodes");
  // The tree, copied out for the checks (untimed).
  {
    const auto nodes = static_cast<std::size_t>(res.counters.nodes);
    platform::Buffer<TreeNode> out(nodes);
    platform::Buffer<int> refs(
        std::max<std::size_t>(1, static_cast<std::size_t>(res.counters.leaf_refs)));
    platform::Buffer<unsigned long long> cursor(1);
    cursor.zero(stream);
    heap.parallel_do<Node, &Node::export_to>(Export{out.data(), refs.data(), cursor.data()});
    res.tree.nodes = out.to_vector(stream);
    res.tree.refs = refs.to_vector(stream);
    res.tree.refs.resize(static_cast<std::size_t>(res.counters.leaf_refs));
  }
  res.live = {{"Node", heap.count<Node>()}, {"RefChunk", heap.count<RefChunk>()}};
  res.heap.emplace_back("heap", std::to_string(heap.heap_bytes() >> 20) + " MiB");
  return finish_build(c, tris, std::move(res), backend::Selected::kName, device_description());
}

}  // namespace dynasoar::example::kdtree
