// Barnes-Hut with a dynamic quadtree as an SMMO program, after the
// barnes-hut example of the original DynaSOAr (Springer & Masuhara, ECOOP
// 2019): bodies and tree cells are objects (Body, TreeNode, both point
// masses: Entry), and the tree is not rebuilt but updated every step, cells
// made with `new` where bodies crowd and removed with `destroy` where they
// leave. The same source is built for every back end that can free
// (barnes_hut_<back end>); the rules and the force walk are in rules.h.
//
// A step, every phase one parallel_do (the do-all of paper Sec. 3.7):
//   1. Body::compute_force   walk the tree (rules.h: tree_acceleration).
//   2. Body::move            integrate, bounce off the walls.
//   3. TreeNode::prune       every leaf unlinks the bodies that left its cell.
//   4. rounds of Body::settle and TreeNode::refine until a round changes
//      nothing: homeless bodies descend from the root (bodies of a cell just
//      split, from that cell) to a leaf and count themselves there, or stop
//      at an inner cell whose child for them is missing and ask for it (a
//      bit in `wanted`); refine splits every leaf that got too many bodies
//      and creates the children asked for (`new`).
//   5. Body::link            bodies that moved push themselves onto their
//                            leaf's list (compare-and-swap).
//   6. TreeNode::summarize   masses and centres bottom-up; a cell whose
//                            subtree has room for its bodies in one leaf
//                            takes its children's lists (collapse), empty
//                            cells are cut off.
//   7. TreeNode::sweep       cut-off cells `destroy` themselves.
//
// No thread ever waits for another. The original inserts bodies with
// compare-and-swap on child slots and splits a leaf in place while other
// threads descend through it, which can make threads spin until another
// one has finished installing a cell; here the tree's structure changes only
// in TreeNode do-alls, each cell by its own thread, and bodies only read it,
// so the phases above are separated by the do-alls' ends instead of by
// waiting. The loops that remain and why each ends:
//   - settle descends one level per iteration: at most kMaxDepth.
//   - link's compare-and-swap fails only when another body's push onto the
//     same leaf succeeded; a leaf takes at most its bodies' pushes in one
//     phase, so a push is retried at most that often (lock-free, bounded).
//   - summarize climbs one level per iteration, and only the thread that
//     completes a cell (the last of its children to arrive, an atomic
//     counter) climbs on; the others stop. Nobody waits for a child.
//   - the host's round loop: a round either changes nothing (the end) or
//     moves every unsettled body a level deeper within two rounds, so it
//     ends within 2 kMaxDepth + 1 rounds; beyond 2 kMaxDepth + 4 it stops
//     with an error instead of looping.
// A `new` that fails (heap full) leaves its child missing and raises the
// heap's error flag; the check_errors after every round throws OutOfMemory,
// so a full heap ends the run with a message instead of another round.
#include <dynasoar/dynasoar.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "dynasoar/support/phase_timer.h"
#include "example/barnes_hut/barnes_hut.h"
#include "example/barnes_hut/rules.h"
#include "example/common/checkpoint.h"
#include "example/common/device_info.h"
#include "example/common/make_heap.h"
#include "example/common/run_loop.h"

namespace dynasoar::example::barnes_hut {
namespace {

// snippet-begin: allocator
class Entry;
class Body;
class TreeNode;
using AllocatorT = dynasoar::Allocator<Entry, Body, TreeNode>;
// snippet-end: allocator

/// Where Entry::write_frame puts the state (the viewer, --check).
struct FrameOut {
  FrameBody* bodies;  // by id
  FrameCell* cells;   // in any order, at most `capacity`
  unsigned* cursor;
  unsigned capacity;
};

struct World {
  Physics p;
  ForceParams f;
  TreeNode* root;
  unsigned* changed;   // refine split or created a cell in this round
  unsigned* overflow;  // a force walk's stack overflowed (never, with depth <= kMaxDepth)
  AllocatorT alloc;
};

/// A point mass: a body, or a cell's centre of mass (the original's NodeBase).
class Entry : public AllocatorT::Base {
 public:
  declare_abstract_field_types(Entry, float, float, float, TreeNode*)
  Field<Entry, 0> x;       // Body: position; TreeNode: centre of mass
  Field<Entry, 1> y;
  Field<Entry, 2> mass;    // TreeNode: of the subtree
  Field<Entry, 3> parent;  // Body: its leaf (or the inner cell it waits at); TreeNode: null at the root

  DYNASOAR_HD Entry(float x0, float y0, float m, TreeNode* up)
      : x(x0), y(y0), mass(m), parent(up) {}

  /// One do-all over Entry visits both subclasses.
  DYNASOAR_HD void write_frame(FrameOut out);
};

class Body : public Entry {
 public:
  declare_field_types(Body, float, float, float, float, int, Body*, bool)
  Field<Body, 0> vx;
  Field<Body, 1> vy;
  Field<Body, 2> ax;      // acceleration of the last force phase
  Field<Body, 3> ay;
  Field<Body, 4> id;      // index at creation: orders the bodies of a leaf
  Field<Body, 5> next;    // next body of the leaf's list
  Field<Body, 6> linked;  // in its leaf's list

  DYNASOAR_HD Body(int i, Physics p, std::uint64_t seed) : Body(i, initial_body(p, seed, i)) {}

  DYNASOAR_HD void compute_force(World w);
  DYNASOAR_HD void move(World w);
  DYNASOAR_HD void settle(World w);
  DYNASOAR_HD void link(World w);
  DYNASOAR_HD void add_checksum(double* sum) {
    platform::atomic_fetch_add(sum, checksum_term(x, y, vx, vy, mass));
  }

 private:
  DYNASOAR_HD Body(int i, InitialBody b)
      : Entry(b.x, b.y, b.mass, nullptr),
        vx(b.vx),
        vy(b.vy),
        ax(0.0f),
        ay(0.0f),
        id(i),
        next(nullptr),
        linked(false) {}
};

using Children = TreeNode* [4];

class TreeNode : public Entry {
 public:
  declare_field_types(TreeNode, Children, Body*, int, int, std::uint32_t, std::uint32_t, unsigned,
                      unsigned, bool, bool, bool)
  Field<TreeNode, 0> children;   // by quadrant (rules.h); all null in a leaf
  Field<TreeNode, 1> head;       // leaf: its bodies (ascending id after summarize)
  Field<TreeNode, 2> count;      // bodies in the subtree (a leaf during an update: bodies that chose it)
  Field<TreeNode, 3> depth;
  Field<TreeNode, 4> ix;         // the cell's integer coordinates at its depth
  Field<TreeNode, 5> iy;
  Field<TreeNode, 6> wanted;     // inner: bit q set by bodies that need child q
  Field<TreeNode, 7> arrived;    // summarize: children finished
  Field<TreeNode, 8> inner;
  Field<TreeNode, 9> collapsed;  // summarize made it a leaf (inner is cleared by sweep)
  Field<TreeNode, 10> dead;      // summarize cut it off; sweep destroys it

  /// The root, the whole box; its address goes to *out.
  DYNASOAR_HD TreeNode(int, TreeNode** out) : TreeNode(nullptr, 0, 0u, 0u) { *out = this; }
  /// Child q of `up`.
  DYNASOAR_HD TreeNode(TreeNode* up, int q)
      : TreeNode(up, up->depth + 1, 2u * up->ix + static_cast<std::uint32_t>(q & 1),
                 2u * up->iy + static_cast<std::uint32_t>(q >> 1)) {}

  DYNASOAR_HD void prune(World w);
  DYNASOAR_HD void refine(World w);
  DYNASOAR_HD void summarize(World w);
  DYNASOAR_HD void sweep(World w);
  /// The root (no parent) writes its address to *out: the host finds the
  /// root again after a compaction moved it.
  DYNASOAR_HD void find_root(TreeNode** out) {
    if (static_cast<TreeNode*>(parent) == nullptr) *out = this;
  }

 private:
  DYNASOAR_HD TreeNode(TreeNode* up, int d, std::uint32_t cx, std::uint32_t cy)
      : Entry(0.0f, 0.0f, 0.0f, up),
        head(nullptr),
        count(0),
        depth(d),
        ix(cx),
        iy(cy),
        wanted(0u),
        arrived(0u),
        inner(false),
        collapsed(false),
        dead(false) {
    for (int q = 0; q < 4; ++q) children[q] = nullptr;
  }
  DYNASOAR_HD void close_leaf();
  DYNASOAR_HD void combine(const World& w);
};

/// The tree as rules.h's force walk reads it.
struct ObjectTree {
  using Node = const TreeNode*;
  const TreeNode* top;
  DYNASOAR_HD Node root() const { return top; }
  DYNASOAR_HD static bool is_none(Node n) { return n == nullptr; }
  DYNASOAR_HD static int depth(Node n) { return n->depth; }
  DYNASOAR_HD static float mass(Node n) { return n->mass; }
  DYNASOAR_HD static float cx(Node n) { return n->x; }
  DYNASOAR_HD static float cy(Node n) { return n->y; }
  DYNASOAR_HD static bool holds(Node n, Key k) { return cell_contains(n->depth, n->ix, n->iy, k); }
  DYNASOAR_HD static bool leaf(Node n) { return !n->inner; }
  DYNASOAR_HD static Node child(Node n, int q) { return n->children[q]; }
  template <class F>
  DYNASOAR_HD static void for_each_body(Node n, F&& f) {
    for (const Body* b = n->head; b != nullptr; b = b->next) f(b->x, b->y, b->mass);
  }
};

/// A list of bodies sorted by id: a bottom-up merge sort of the linked list
/// (no recursion, O(k log k); a leaf at kMaxDepth may hold many bodies).
DYNASOAR_HD Body* sort_by_id(Body* list) {
  if (list == nullptr) return nullptr;
  for (int run = 1;; run *= 2) {
    Body* p = list;
    Body* tail = nullptr;
    list = nullptr;
    int merges = 0;
    while (p != nullptr) {
      ++merges;
      Body* q = p;
      int p_size = 0;
      while (p_size < run && q != nullptr) {
        ++p_size;
        q = q->next;
      }
      int q_size = run;
      while (p_size > 0 || (q_size > 0 && q != nullptr)) {
        Body* e;
        if (p_size == 0 ||
            (q_size > 0 && q != nullptr && static_cast<int>(q->id) < static_cast<int>(p->id))) {
          e = q;
          q = q->next;
          --q_size;
        } else {
          e = p;
          p = p->next;
          --p_size;
        }
        if (tail != nullptr)
          tail->next = e;
        else
          list = e;
        tail = e;
      }
      p = q;
    }
    tail->next = nullptr;
    if (merges <= 1) return list;
  }
}

// --- the step ----------------------------------------------------------------------------

DYNASOAR_HD void Body::compute_force(World w) {
  float sx = 0.0f, sy = 0.0f;
  if (!tree_acceleration(ObjectTree{w.root}, w.f, x, y, sx, sy))
    platform::atomic_store(w.overflow, 1u);
  ax = sx;
  ay = sy;
}

DYNASOAR_HD void Body::move(World w) {
  float px = x, pvx = vx, py = y, pvy = vy;
  barnes_hut::move(w.p, px, pvx, ax);
  barnes_hut::move(w.p, py, pvy, ay);
  x = px;
  vx = pvx;
  y = py;
  vy = pvy;
}

// Only this leaf's thread touches its list and the bodies on it.
DYNASOAR_HD void TreeNode::prune(World) {
  arrived = 0u;
  if (inner) return;
  Body** link = &head;
  int removed = 0;
  for (Body* b = head; b != nullptr;) {
    Body* following = b->next;
    if (cell_contains(depth, ix, iy, key_of(b->x, b->y))) {
      link = &b->next;
    } else {
      *link = following;
      b->parent = nullptr;
      b->linked = false;
      ++removed;
    }
    b = following;
  }
  count -= removed;
}

// Reads the tree's structure (written only by refine, in other do-alls);
// writes counters and request bits with atomics.
DYNASOAR_HD void Body::settle(World w) {
  TreeNode* at = parent;
  if (at != nullptr && !at->inner) return;  // in a leaf that holds it
  linked = false;  // its leaf was split (and its list dropped), or it has none
  if (at == nullptr) at = w.root;
  const Key k = key_of(x, y);
  while (at->inner) {  // one level per iteration: at most kMaxDepth
    const int q = quadrant(k, at->depth);
    TreeNode* c = at->children[q];
    if (c == nullptr) {
      // Ask refine for the child and stay here until the next round (by
      // returning: nobody spins).
      const unsigned bit = 1u << q;
      if ((platform::atomic_load(&at->wanted) & bit) == 0u)
        platform::atomic_fetch_or(&at->wanted, bit);
      parent = at;
      return;
    }
    at = c;
  }
  platform::atomic_fetch_add(&at->count, 1);
  parent = at;
}

// snippet-begin: refine
DYNASOAR_HD void TreeNode::refine(World w) {
  if (!inner) {
    if (count > w.p.leaf_capacity && depth < kMaxDepth) {
      // Split: its bodies see an inner cell in the next settle and descend.
      inner = true;
      head = nullptr;
      platform::atomic_store(w.changed, 1u);
    }
    return;
  }
  const unsigned want = wanted;
  if (want == 0u) return;
  wanted = 0u;
  for (int q = 0; q < 4; ++q)
    if ((want & (1u << q)) != 0u)
      children[q] = new (w.alloc) TreeNode(this, q);  // null if the heap is full
  platform::atomic_store(w.changed, 1u);
}
// snippet-end: refine

// snippet-begin: link
DYNASOAR_HD void Body::link(World) {
  if (linked) return;
  TreeNode* leaf = parent;
  Body* first = platform::atomic_load(&leaf->head);
  // A failed exchange means another body's push onto this leaf succeeded
  // (first now holds the new head); pushes per leaf are bounded, so this ends.
  do {
    next = first;
  } while (!platform::atomic_compare_exchange(&leaf->head, first, this));
  linked = true;
}
// snippet-end: link

// Sorts the list, counts it and sums its masses.
DYNASOAR_HD void TreeNode::close_leaf() {
  Body* sorted = sort_by_id(head);
  head = sorted;
  MassSum s;
  int n = 0;
  for (const Body* b = sorted; b != nullptr; b = b->next) {
    s.add(b->mass, b->x, b->y);
    ++n;
  }
  count = n;
  mass = s.m;
  x = s.cx();
  y = s.cy();
}

// All children are finished. A cell whose bodies fit one leaf takes their
// lists (its children are leaves then: a child with at most as many bodies
// was collapsed before it arrived); otherwise empty children are cut off.
DYNASOAR_HD void TreeNode::combine(const World& w) {
  int total = 0;
  for (int q = 0; q < 4; ++q)
    if (const TreeNode* c = children[q]) total += c->count;
  if (total <= w.p.leaf_capacity) {
    Body* all = nullptr;
    for (int q = 0; q < 4; ++q) {
      TreeNode* c = children[q];
      if (c == nullptr) continue;
      for (Body* b = c->head; b != nullptr;) {
        Body* following = b->next;
        b->next = all;
        b->parent = this;
        all = b;
        b = following;
      }
      c->dead = true;
      children[q] = nullptr;
    }
    head = all;
    collapsed = true;
    close_leaf();
    return;
  }
  MassSum s;
  for (int q = 0; q < 4; ++q) {
    TreeNode* c = children[q];
    if (c == nullptr) continue;
    if (c->count == 0) {
      c->dead = true;
      children[q] = nullptr;
    } else {
      s.add(c->mass, c->x, c->y);
    }
  }
  count = total;
  mass = s.m;
  x = s.cx();
  y = s.cy();
}

// snippet-begin: summarize
DYNASOAR_HD void TreeNode::summarize(World w) {
  // Leaves start. `inner` does not change during this do-all (a collapse
  // sets `collapsed`), so every cell takes one role, once.
  if (inner) return;
  close_leaf();
  for (TreeNode* node = this; TreeNode* up = node->parent; node = up) {
    int children_there = 0;
    for (int q = 0; q < 4; ++q)
      children_there += static_cast<TreeNode*>(up->children[q]) != nullptr ? 1 : 0;
    // The last child to arrive finishes the parent; the others are done.
    // acq_rel: the last one sees what every earlier one wrote.
    if (static_cast<int>(platform::atomic_fetch_add(&up->arrived, 1u, platform::acq_rel)) + 1 <
        children_there)
      return;
    up->combine(w);
  }
}
// snippet-end: summarize

DYNASOAR_HD void TreeNode::sweep(World w) {
  if (dead) {
    dynasoar::destroy(w.alloc, this);
    return;
  }
  if (collapsed) {
    inner = false;
    collapsed = false;
  }
}

DYNASOAR_HD void Entry::write_frame(FrameOut out) {
  const auto up = reinterpret_cast<std::uint64_t>(static_cast<TreeNode*>(parent));
  if (const Body* b = cast<Body>()) {
    out.bodies[b->id] = FrameBody{x, y, b->vx, b->vy, b->ax, b->ay, mass, b->id, up};
    return;
  }
  const TreeNode* t = cast<TreeNode>();
  const unsigned slot = platform::atomic_fetch_add(out.cursor, 1u);
  if (slot >= out.capacity) return;
  out.cells[slot] = FrameCell{reinterpret_cast<std::uint64_t>(t), up, t->depth, t->ix, t->iy, t->count,
                              mass, x, y, static_cast<std::uint8_t>(t->inner ? 0 : 1)};
}

}  // namespace

RunReport run(const Config& c) {
  if (c.bodies < 1) throw std::invalid_argument("barnes-hut: needs at least one body");
  if (c.physics.leaf_capacity < 1) throw std::invalid_argument("barnes-hut: leaf capacity below 1");
  using Handle = dynasoar::AllocatorHandle<AllocatorT>;
  const auto n = static_cast<std::size_t>(c.bodies);
  const int K = c.physics.leaf_capacity;
  check_checkpoints<AllocatorT>(c.checkpoint, "barnes_hut");
  Handle heap =
      make_heap<Handle>(c.heap_bytes != 0 ? c.heap_bytes : default_heap_bytes(c.bodies, K),
                        2 * max_cells(c.bodies, K) + n);
  const platform::Stream stream = heap.stream();
  platform::Buffer<TreeNode*> root_slot(1);
  platform::Buffer<unsigned> changed(1), overflow(1);
  overflow.zero(stream);
  const auto out_of_memory = [&](const OutOfMemory& e, const std::string& when) {
    return OutOfMemory(std::string(e.what()) + " (barnes-hut, " + when + ": " + std::to_string(n) +
                       " bodies and their tree in " + std::to_string(heap.heap_bytes() >> 10) +
                       " KiB; give a larger --heap-mib)");
  };
  // --resume: the bodies and the tree as they were after step `resumed`;
  // the host's copy of the root is found again, as after a compaction.
  const std::string identity = run_identity(make_report(c, "", "", 0, {}));
  const int resumed = resume(heap, c.checkpoint, identity, c.steps);
  try {
    if (resumed != 0) {
      heap.parallel_do<TreeNode, &TreeNode::find_root>(root_slot.data());
    } else {
      heap.parallel_new<TreeNode>(1, root_slot.data());
      heap.parallel_new<Body>(n, c.physics, c.seed);
    }
  } catch (const OutOfMemory& e) {
    throw out_of_memory(e, "creating the bodies");
  }
  World w{c.physics,
          force_params(c.physics, c.bodies),
          root_slot.to_vector(stream)[0],
          changed.data(),
          overflow.data(),
          heap.device()};

  // Steps 3 to 7 of a step (the build at the start is the same with every
  // body homeless). Returns the rounds of settle and refine.
  support::PhaseTimer* timing = nullptr;
  const auto mark = [&](const char* phase) {
    if (timing != nullptr) timing->mark(phase);
  };
  const auto update_tree = [&](int step) {
    int rounds = 0;
    try {
      heap.parallel_do_async<TreeNode, &TreeNode::prune>(w);
      mark("tree: prune");
      for (;; ++rounds) {
        if (rounds > 2 * kMaxDepth + 4)
          throw std::logic_error("barnes-hut: the tree did not settle within " +
                                 std::to_string(rounds) + " rounds at step " +
                                 std::to_string(step));
        changed.zero(stream);
        heap.parallel_do_async<Body, &Body::settle>(w);
        mark("tree: insert");
        heap.parallel_do_async<TreeNode, &TreeNode::refine>(w);
        mark("tree: split");
        const bool again = changed.to_vector(stream)[0] != 0;  // waits for the stream
        heap.check_errors();                                   // a failed `new` ends the run here
        if (!again) break;
      }
      heap.parallel_do_async<Body, &Body::link>(w);
      mark("tree: link");
      heap.parallel_do_async<TreeNode, &TreeNode::summarize>(w);
      mark("tree: summarize");
      heap.parallel_do_async<TreeNode, &TreeNode::sweep>(w);
      mark("tree: sweep");
    } catch (const OutOfMemory& e) {
      throw out_of_memory(
          e, step == 0 ? "building the tree" : "updating the tree at step " + std::to_string(step));
    }
    return rounds + 1;
  };
  if (resumed == 0) update_tree(0);

  // The state copied to the host (viewer, --check), untimed.
  const auto copy_state = [&](int step) {
    Frame f;
    f.step = step;
    const auto cells = static_cast<unsigned>(heap.count<TreeNode>());
    platform::Buffer<FrameBody> bodies(n);
    platform::Buffer<FrameCell> out(cells);
    platform::Buffer<unsigned> cursor(1);
    cursor.zero(stream);
    heap.parallel_do<Entry, &Entry::write_frame>(
        FrameOut{bodies.data(), out.data(), cursor.data(), cells});
    f.bodies = bodies.to_vector(stream);
    f.cells = out.to_vector(stream);
    return f;
  };
  support::PhaseTimer timer(stream);
  const double enumeration_before = enumeration_seconds(heap);
  int rounds = 0, most_rounds = 0;
  timing = &timer;
  run_steps(c, timer, [&](int step) {
    heap.parallel_do_async<Body, &Body::compute_force>(w);
    timer.mark("forces");
    heap.parallel_do_async<Body, &Body::move>(w);
    timer.mark("move");
    const int r = update_tree(step);
    rounds += r;
    most_rounds = std::max(most_rounds, r);
    // --defrag: a compaction rewrites every pointer in the objects' fields,
    // but not the host's copy of the root; it is found again.
    if (heap.compact_if_fragmented().blocks_freed != 0) {
      heap.parallel_do<TreeNode, &TreeNode::find_root>(root_slot.data());
      w.root = root_slot.to_vector(stream)[0];
      timer.mark("compaction");
    }
    checkpoint_if_due(heap, c.checkpoint, identity, step, timer);
  }, [&](int step) { c.on_frame(copy_state(step)); }, resumed + 1);
  RunReport r = make_report(c, backend::Selected::kName, device_description(), timer.total_ms(),
                            timer.phases_ms());
  timing = nullptr;
  if constexpr (HasRegistry<Handle>)
    r.extra_ms.emplace_back("registry enumeration (host clock)",
                            (enumeration_seconds(heap) - enumeration_before) * 1e3);

  if (c.on_check) {
    heap.parallel_do<Body, &Body::compute_force>(w);
    c.on_check(copy_state(c.steps));
  }
  if (overflow.to_vector(stream)[0] != 0)
    throw std::logic_error(
        "barnes-hut: the force walk's stack overflowed (the tree is deeper than kMaxDepth)");

  platform::Buffer<double> sum(1);
  sum.zero(stream);
  heap.parallel_do<Body, &Body::add_checksum>(sum.data());
  const std::uint64_t bodies = heap.count<Body>();
  r.float_checksum = sum.to_vector(stream)[0] + static_cast<double>(bodies);
  r.live = {{"Body", bodies}, {"TreeNode", heap.count<TreeNode>()}};
  r.heap.emplace_back("heap", std::to_string(heap.heap_bytes() >> 20) + " MiB");
  report_compaction(heap, r);
  r.heap.emplace_back("tree updates", std::to_string(rounds) + " rounds of insert and split in " +
                                          std::to_string(c.steps - resumed) + " steps, at most " +
                                          std::to_string(most_rounds) + " in one");
  return r;
}

}  // namespace dynasoar::example::barnes_hut
