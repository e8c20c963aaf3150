// The structure example as an SMMO program (the original DynaSOAr's
// `structure`): nodes of the abstract class NodeBase (subclasses AnchorNode,
// its subclass AnchorPullNode, and Node) joined by objects of class Spring.
// Each node keeps its springs in an array field, a spring its two ends in
// pointer fields. Springs that break destroy themselves inside the do-all
// that computes their forces, a node goes with its last spring, and the
// springs of parts that no anchor holds any more are removed after a
// breadth-first search: the run only frees, so the heap fragments as it
// goes. The same source is built for every back end that can free
// (structure_<back end>); the model is in rules.h.
#include <dynasoar/dynasoar.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "dynasoar/support/phase_timer.h"
#include "example/common/checkpoint.h"
#include "example/common/device_info.h"
#include "example/common/make_heap.h"
#include "example/common/run_loop.h"
#include "example/structure/rules.h"
#include "example/structure/structure.h"

namespace dynasoar::example::structure {
namespace {

class NodeBase;
class AnchorNode;
class AnchorPullNode;
class Node;
class Spring;
using AllocatorT = dynasoar::Allocator<NodeBase, AnchorNode, AnchorPullNode, Node, Spring>;

/// What the methods that move or remove need: the lattice (which end of a
/// spring a node is) and the allocator.
struct World {
  Lattice lattice;
  AllocatorT alloc;
};

class NodeBase : public AllocatorT::Base {
 public:
  declare_abstract_field_types(NodeBase, Spring* [kMaxDegree], float, float, int, int, int)
  Field<NodeBase, 0> springs;      // by slot (rules.h, Slot); null where there is none
  Field<NodeBase, 1> pos_x;
  Field<NodeBase, 2> pos_y;
  Field<NodeBase, 3> num_springs;  // non-null slots; the last spring to go destroys the node
  Field<NodeBase, 4> distance;     // springs from the nearest anchor (the search), or kUnreached
  Field<NodeBase, 5> id;           // index at the start

  /// Node i with its initial position; the springs fill its slots.
  DYNASOAR_HD NodeBase(const Lattice& l, int i)
      : pos_x(initial_x(l, i)), pos_y(initial_y(l, i)), num_springs(initial_degree(l, i)), distance(0), id(i) {
    for (int s = 0; s < kMaxDegree; ++s) springs[s] = nullptr;
  }

  DYNASOAR_HD Kind kind() const;
  DYNASOAR_HD void initialize_search();
  DYNASOAR_HD void visit(Lattice l, int level, unsigned* found);
  DYNASOAR_HD void mark_cut_off(World w);
  DYNASOAR_HD void add_checksum(unsigned long long* sum);
  DYNASOAR_HD void write_frame(FrameNode* out);
};

class AnchorNode : public NodeBase {
 public:
  declare_field_types(AnchorNode)  // no fields of its own

  /// parallel_new's object i: node ids[i]; table[id] is this node.
  DYNASOAR_HD AnchorNode(int i, const int* ids, Lattice l, NodeBase** table) : NodeBase(l, ids[i]) {
    table[ids[i]] = this;
  }

 protected:
  DYNASOAR_HD AnchorNode(const Lattice& l, int i) : NodeBase(l, i) {}
};

class AnchorPullNode : public AnchorNode {
 public:
  declare_field_types(AnchorPullNode, float, float)
  Field<AnchorPullNode, 0> vel_x;
  Field<AnchorPullNode, 1> vel_y;

  DYNASOAR_HD AnchorPullNode(int i, const int* ids, Lattice l, NodeBase** table)
      : AnchorNode(l, ids[i]), vel_x(pull_velocity(l, ids[i], kPullX)), vel_y(pull_velocity(l, ids[i], kPullY)) {
    table[ids[i]] = this;
  }

  DYNASOAR_HD void pull() {
    pos_x = pulled(pos_x, vel_x);
    pos_y = pulled(pos_y, vel_y);
  }
};

class Node : public NodeBase {
 public:
  declare_field_types(Node, float, float, float)
  Field<Node, 0> vel_x;
  Field<Node, 1> vel_y;
  Field<Node, 2> mass;

  DYNASOAR_HD Node(int i, const int* ids, Lattice l, NodeBase** table)
      : NodeBase(l, ids[i]), vel_x(0.0f), vel_y(0.0f), mass(initial_mass(l, ids[i])) {
    table[ids[i]] = this;
  }

  DYNASOAR_HD void move(World w);
};

class Spring : public AllocatorT::Base {
 public:
  declare_field_types(Spring, NodeBase*, NodeBase*, float, float, float, float, float, float, int, int, int)
  Field<Spring, 0> p1;           // first end (rules.h, first_end)
  Field<Spring, 1> p2;           // second end
  Field<Spring, 2> factor;
  Field<Spring, 3> rest;         // rest length
  Field<Spring, 4> force;        // size of the force of the last compute_force
  Field<Spring, 5> force_x;      // the force on p1 (p2 gets the negative)
  Field<Spring, 6> force_y;
  Field<Spring, 7> max_force;    // it breaks above this
  Field<Spring, 8> cut_off;      // 1: an end is held by no anchor (mark_cut_off)
  Field<Spring, 9> first_slot;   // its slot in p1 (in p2: second_slot of it)
  Field<Spring, 10> id;          // index at the start

  /// parallel_new's object i: the spring of codes[i] between two nodes of
  /// `table`, entered in their slots. (float{kMaxForce}: a field's
  /// constructor takes a reference, and device code cannot refer to the
  /// host's constant itself, only to a copy.)
  DYNASOAR_HD Spring(int i, const int* codes, Lattice l, NodeBase** table)
      : force(0.0f), force_x(0.0f), force_y(0.0f), max_force(float{kMaxForce}), cut_off(0), id(i) {
    const int code = codes[i];
    const int slot = code_slot(code);
    const int a = code_first_end(code), b = neighbour(l, a, slot);
    NodeBase* first = table[a];
    NodeBase* second = table[b];
    p1 = first;
    p2 = second;
    factor = spring_factor(l, code);
    rest = rest_length(l, a, b);
    first_slot = slot;
    first->springs[slot] = this;
    second->springs[second_slot(slot)] = this;
  }

  /// The force at the ends' positions; a spring pulled too hard breaks.
  DYNASOAR_HD void compute_force(World w) {
    const NodeBase* a = p1;
    const NodeBase* b = p2;
    const SpringForce f = spring_force(a->pos_x, a->pos_y, b->pos_x, b->pos_y, factor, rest);
    force = f.size;
    force_x = f.x;
    force_y = f.y;
    if (breaks(f.size, max_force)) remove(w);
  }

  DYNASOAR_HD void remove_if_cut_off(World w) {
    if (cut_off != 0) remove(w);
  }

  DYNASOAR_HD void add_checksum(unsigned long long* sum) {
    platform::atomic_fetch_add(sum, static_cast<unsigned long long>(spring_term(id, force)));
  }

  DYNASOAR_HD void write_frame(FrameSpring* out) {
    const NodeBase* a = p1;
    const NodeBase* b = p2;
    out[id] = FrameSpring{a->pos_x, a->pos_y, b->pos_x, b->pos_y, load_byte(force, max_force), 1};
  }

 private:
  /// Leaves both ends' slots and destroys itself; an end whose last spring
  /// this was is destroyed too. Every other spring of that end has left it
  /// before, after reading its position: the release and acquire of the
  /// count order those reads before the destroy.
  DYNASOAR_HD void remove(World w) {
    const int slot = first_slot;
    leave(w, p1, slot);
    leave(w, p2, second_slot(slot));
    dynasoar::destroy(w.alloc, this);
  }
  static DYNASOAR_HD void leave(World w, NodeBase* n, int slot) {
    n->springs[slot] = nullptr;
    if (platform::atomic_fetch_sub(&n->num_springs, 1, platform::acq_rel) == 1) dynasoar::destroy(w.alloc, n);
  }
};

DYNASOAR_HD Kind NodeBase::kind() const {
  if (is_a<Node>()) return Kind::kNode;
  return is_a<AnchorPullNode>() ? Kind::kPull : Kind::kAnchor;
}

/// Sums its springs' forces in slot order and moves.
DYNASOAR_HD void Node::move(World w) {
  const int me = id;
  float fx = 0.0f, fy = 0.0f;
  for (int s = 0; s < kMaxDegree; ++s) {
    const Spring* sp = springs[s];
    if (sp != nullptr) add_force(fx, fy, SpringForce{sp->force, sp->force_x, sp->force_y}, first_end(w.lattice, me, s));
  }
  const float m = mass;
  float x = pos_x, vx = vel_x, y = pos_y, vy = vel_y;
  move_coordinate(x, vx, fx, m);
  move_coordinate(y, vy, fy, m);
  pos_x = x;
  vel_x = vx;
  pos_y = y;
  vel_y = vy;
}

// The search: anchors (pull nodes too) at distance 0, then one do-all per
// level, in which every node at the level gives its unreached neighbours the
// next. Neighbours' distances are read and written atomically: other threads
// of the do-all set them.
DYNASOAR_HD void NodeBase::initialize_search() { distance = is_a<AnchorNode>() ? 0 : static_cast<int>(kUnreached); }

DYNASOAR_HD void NodeBase::visit(Lattice l, int level, unsigned* found) {
  if (platform::atomic_load(&distance) != level) return;
  platform::atomic_store(found, 1u);
  const int me = id;
  for (int s = 0; s < kMaxDegree; ++s) {
    const Spring* sp = springs[s];
    if (sp == nullptr) continue;
    NodeBase* other = first_end(l, me, s) ? static_cast<NodeBase*>(sp->p2) : static_cast<NodeBase*>(sp->p1);
    int expected = kUnreached;
    platform::atomic_compare_exchange(&other->distance, expected, level + 1);
  }
}

/// A node the search did not reach marks its springs for removal; a node
/// without springs (one whose lattice springs were all left out at the
/// start) goes at once.
DYNASOAR_HD void NodeBase::mark_cut_off(World w) {
  if (num_springs == 0) {
    dynasoar::destroy(w.alloc, this);
    return;
  }
  if (distance != kUnreached) return;
  for (int s = 0; s < kMaxDegree; ++s) {
    Spring* sp = springs[s];
    if (sp != nullptr) platform::atomic_store(&sp->cut_off, 1);
  }
}

DYNASOAR_HD void NodeBase::add_checksum(unsigned long long* sum) {
  const Kind k = kind();
  float vx = 0.0f, vy = 0.0f;
  if (const Node* n = cast<Node>()) {
    vx = n->vel_x;
    vy = n->vel_y;
  } else if (const AnchorPullNode* p = cast<AnchorPullNode>()) {
    vx = p->vel_x;
    vy = p->vel_y;
  }
  platform::atomic_fetch_add(sum, static_cast<unsigned long long>(node_term(id, k, pos_x, pos_y, vx, vy, num_springs)));
}

DYNASOAR_HD void NodeBase::write_frame(FrameNode* out) { out[id] = FrameNode{pos_x, pos_y, static_cast<std::uint8_t>(kind())}; }

}  // namespace

RunReport run(const Config& c) {
  if (c.nodes < 2) throw std::invalid_argument("structure: needs at least 2 nodes");
  if (c.iterations < 1) throw std::invalid_argument("structure: needs at least 1 iteration per step");
  const Lattice lattice = make_lattice(c.nodes, c.seed);
  // The nodes of each class and the springs, by index: host code that calls
  // the same functions as the device.
  std::vector<int> ids[3];  // Kind - 1: anchors, pull nodes, nodes
  for (int i = 0; i < c.nodes; ++i) ids[static_cast<int>(node_kind(lattice, i)) - 1].push_back(i);
  const std::vector<int> codes = spring_codes(lattice);
  const int springs = static_cast<int>(codes.size());

  const std::uint64_t heap_bytes = c.heap_bytes != 0 ? c.heap_bytes : default_heap_bytes(c.nodes);
  check_checkpoints<AllocatorT>(c.checkpoint, "structure");
  using Handle = dynasoar::AllocatorHandle<AllocatorT>;
  Handle heap = make_heap<Handle>(heap_bytes, static_cast<std::uint64_t>(std::max(c.nodes, springs)));
  const platform::Stream stream = heap.stream();
  // --resume: the nodes and springs as they were after step `resumed`. The
  // lattice is made again from the seed; the identity holds its spring count.
  const std::string identity = run_identity(make_report(c, springs, "", "", 0, {}));
  const int resumed = resume(heap, c.checkpoint, identity, c.steps);
  if (resumed == 0) {
    // Nodes class by class, each entered in `table` by index, then the
    // springs, which find their ends there and enter themselves in them.
    platform::Buffer<NodeBase*> table(static_cast<std::size_t>(c.nodes));
    const auto make = [&](auto tag, const std::vector<int>& v) {
      using T = typename decltype(tag)::type;
      if (v.empty()) return;
      platform::Buffer<int> d(v.size());
      d.copy_from_host(v.data(), v.size(), stream);
      heap.parallel_new<T>(v.size(), static_cast<const int*>(d.data()), lattice, table.data());
    };
    make(std::type_identity<AnchorNode>{}, ids[0]);
    make(std::type_identity<AnchorPullNode>{}, ids[1]);
    make(std::type_identity<Node>{}, ids[2]);
    make(std::type_identity<Spring>{}, codes);
  }

  // The viewer's copy of the structure, only where a frame is due.
  const auto send_frame = [&](int step) {
    platform::Buffer<FrameNode> nodes(static_cast<std::size_t>(c.nodes));
    platform::Buffer<FrameSpring> links(static_cast<std::size_t>(std::max(springs, 1)));
    nodes.zero(stream);
    links.zero(stream);
    heap.parallel_do<NodeBase, &NodeBase::write_frame>(nodes.data());
    heap.parallel_do<Spring, &Spring::write_frame>(links.data());
    std::vector<FrameSpring> s = links.to_vector(stream);
    s.resize(static_cast<std::size_t>(springs));
    c.on_frame(Frame{step, lattice.columns, lattice.rows(), nodes.to_vector(stream), std::move(s)});
  };
  platform::Buffer<unsigned> found(kBfsLevelsPerCheck);  // found[j]: a node was at the batch's level j
  support::PhaseTimer timer(stream);
  const double enumeration_before = enumeration_seconds(heap);
  run_steps(c, timer, [&](int step) {
    const World w{lattice, heap.device()};
    heap.parallel_do_async<AnchorPullNode, &AnchorPullNode::pull>();
    timer.mark("pull");
    for (int k = 0; k < c.iterations; ++k) {
      heap.parallel_do_async<Spring, &Spring::compute_force>(w);
      timer.mark("spring forces");
      heap.parallel_do_async<Node, &Node::move>(w);
      timer.mark("move");
    }
    heap.parallel_do_async<NodeBase, &NodeBase::initialize_search>();
    // Levels in batches: a batch whose last level found nobody ends the search.
    for (int level = 0;; level += kBfsLevelsPerCheck) {
      found.zero(stream);
      for (int j = 0; j < kBfsLevelsPerCheck; ++j)
        heap.parallel_do_async<NodeBase, &NodeBase::visit>(lattice, level + j, found.data() + j);
      if (found.to_vector(stream)[kBfsLevelsPerCheck - 1] == 0) break;
    }
    timer.mark("search");
    heap.parallel_do_async<NodeBase, &NodeBase::mark_cut_off>(w);
    heap.parallel_do_async<Spring, &Spring::remove_if_cut_off>(w);
    timer.mark("remove");
    check_heap_now_and_then(heap, step, c.steps);
    end_of_step(heap, timer);  // --defrag
    checkpoint_if_due(heap, c.checkpoint, identity, step, timer);
  }, send_frame, resumed + 1);

  RunReport r = make_report(c, springs, backend::Selected::kName, device_description(), timer.total_ms(),
                            timer.phases_ms());
  if constexpr (HasRegistry<Handle>)
    r.extra_ms.emplace_back("registry enumeration (host clock)", (enumeration_seconds(heap) - enumeration_before) * 1e3);

  platform::Buffer<unsigned long long> sum(1);
  sum.zero();
  heap.parallel_do<NodeBase, &NodeBase::add_checksum>(sum.data());
  heap.parallel_do<Spring, &Spring::add_checksum>(sum.data());
  r.checksum = sum.to_vector()[0];
  const std::uint64_t nodes_left = heap.count<NodeBase>(), springs_left = heap.count<Spring>();
  r.live = {{"AnchorNode", heap.count_single_type<AnchorNode>()},
            {"AnchorPullNode", heap.count<AnchorPullNode>()},
            {"Node", heap.count<Node>()},
            {"Spring", springs_left}};
  r.heap.emplace_back("removed", removed_text(nodes_left, c.nodes, springs_left, springs));
  r.heap.emplace_back("heap", std::to_string(heap.heap_bytes() >> 20) + " MiB");
  report_compaction(heap, r);
  const char* names[] = {"NodeBase", "AnchorNode", "AnchorPullNode", "Node", "Spring"};  // the allocator's type list
  report_statistics<NodeBase, Spring>(heap, r, names);
  return r;
}

}  // namespace dynasoar::example::structure
