// A quadtree built the way the original DynaSOAr's dynamic Barnes-Hut builds
// it: every body inserts itself in one parallel_do, and a thread that splits
// a leaf waits until the body it moves down has its parent set by the thread
// that inserted it (a wait for work another thread has begun;
// docs/guide/operations.md, "What a method may wait for"). Other do-alls of
// the same step remove bodies that left their cell and collapse nodes that
// lost their bodies, so new and destroy churn every step.
//
// Positions are integers in [0, 2^kBits)^2 and x is a bijection of the id,
// so no two bodies share a position and the tree of a step is the canonical
// quadtree of its positions: a node for every cell that holds two or more
// bodies, each body in the slot of the deepest such cell. The host computes
// that tree's node count and a checksum of every body's depth from sorted
// Morton codes (reference()), so each step is checked exactly.
//
// Shared by tree_insert_test.cpp (every freeing back end) and
// tree_insert_probe.cpp (the same program with plain reads, run apart).
#pragma once

#include <dynasoar/dynasoar.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace dynasoar::test::tree {

/// Bits of a coordinate: positions are in [0, 2^kBits)^2.
inline constexpr int kBits = 20;
inline constexpr unsigned kExtent = 1u << kBits;

/// How a thread reads a child slot that other threads change during the
/// insertion do-all, and how it publishes a node it made.
enum class Reads {
  /// The guide's rule: an acquire load of the slot, a release (acq_rel)
  /// compare-and-swap to publish.
  kAtomic,
  /// As the original's code: a plain load of the slot, a fence and a
  /// relaxed compare-and-swap to publish.
  kPlain,
  /// kPlain, and the original's bookkeeping of a body's slot: a field that
  /// the inserter writes after its second CAS and the splitting thread after
  /// its wait, with nothing ordering the two; clear() trusts it.
  kOriginal,
};

/// Body `id`'s position at `step` of run `seed`. x drifts by 5 a step
/// (a few bodies cross a cell border); y jumps to a new random value every
/// 1, 2 or 3 steps (by id), so a third to all of the bodies are reinserted
/// each step and the others stay.
DYNASOAR_HD inline unsigned body_x(int id, int step) {
  return (static_cast<unsigned>(id) * 2654435761u + static_cast<unsigned>(step) * 5u) &
         (kExtent - 1);
}
DYNASOAR_HD inline unsigned body_y(int id, int step, std::uint64_t seed) {
  const int period = id % 3 + 1;
  const std::uint64_t key = (seed << 40) ^ (static_cast<std::uint64_t>(id) << 16) ^
                            static_cast<std::uint64_t>(step / period);
  return static_cast<unsigned>(platform::mix64(key)) & (kExtent - 1);
}

/// Morton code of (x, y): digit L (from the top, 2 bits) is the quadrant at
/// depth L, x's bit in bit 0 and y's in bit 1.
DYNASOAR_HD inline std::uint64_t morton(unsigned x, unsigned y) {
  std::uint64_t code = 0;
  for (int b = kBits - 1; b >= 0; --b) code = code << 2 | ((x >> b) & 1u) | ((y >> b) & 1u) << 1;
  return code;
}
/// The quadrant of `code` at depth `depth` (0: the root's children).
DYNASOAR_HD inline int digit(std::uint64_t code, int depth) {
  return static_cast<int>((code >> (2 * (kBits - 1 - depth))) & 3u);
}
/// Checksum term of a body at `levels` nodes below the root (1: in the root).
DYNASOAR_HD inline unsigned long long term(int id, int levels) {
  return platform::mix64(static_cast<std::uint64_t>(id) * 64 + static_cast<std::uint64_t>(levels));
}

/// Results of Body::verify and Inner::verify, summed over all objects.
enum Sum { kBodies, kChecksum, kErrors, kInner, kSums };

template <class Backend, Reads kReads = Reads::kAtomic>
struct World {
  class Node;
  class Body;
  class Inner;
  using Alloc = typename Backend::template Allocator<Node, Body, Inner>;
  using Handle = dynasoar::AllocatorHandle<Alloc>;
  using ull = unsigned long long;

  class Node : public Alloc::Base {
   public:
    declare_abstract_field_types(Node, Inner*, int)
    Field<Node, 0> parent;  // null for the root, and for a body that is not in the tree
    Field<Node, 1>
        child_index;  // Reads::kOriginal: the body's slot in its parent, as the original keeps it
  };

  class Inner : public Node {
   public:
    declare_field_types(Inner, Node* [4], int, std::uint64_t)
    Field<Inner, 0> children;
    Field<Inner, 1> depth;
    Field<Inner, 2> prefix;  // the Morton digits of the path from the root; the last is its slot

    /// The child of `up` in quadrant q, or the root (up null).
    DYNASOAR_HD Inner(Inner* up, int q)
        : depth(up == nullptr ? 0 : up->depth + 1),
          prefix(up == nullptr
                     ? 0
                     : (static_cast<std::uint64_t>(up->prefix) << 2 | static_cast<unsigned>(q))) {
      this->parent = up;
      this->child_index = q;
      for (int k = 0; k < 4; ++k) children[k] = nullptr;
    }

    DYNASOAR_HD void note_depth(int* deepest) {
      const int mine = depth;
      int seen = platform::atomic_load(deepest);
      while (seen < mine && !platform::atomic_compare_exchange(deepest, seen, mine)) {
      }
    }

    /// Collapse, deepest nodes first (one do-all per depth, so a node's
    /// children are final when it runs and its parent does not run): a node
    /// without children goes, one whose only child is a body hands the body
    /// to its parent and goes.
    DYNASOAR_HD void collapse(int at, Alloc alloc) {
      if (depth != at || at == 0) return;
      Node* only = nullptr;
      int n = 0;
      for (int k = 0; k < 4; ++k)
        if (Node* c = children[k]) {
          ++n;
          only = c;
        }
      Body* body = dynasoar::cast<Body>(only);
      if (n > 1 || (n == 1 && body == nullptr)) return;
      Inner* up = this->parent;
      const int slot = static_cast<int>(static_cast<std::uint64_t>(prefix) & 3u);
      up->children[slot] = body;  // null if there was no child
      if (body != nullptr) {
        body->parent = up;
        body->child_index = slot;
      }
      dynasoar::destroy(alloc, this);
    }

    DYNASOAR_HD void verify(ull* sums) {
      platform::atomic_fetch_add(&sums[kInner], 1ull);
      for (int k = 0; k < 4; ++k) {
        Node* c = children[k];
        if (c != nullptr && static_cast<Inner*>(c->parent) != this)
          platform::atomic_fetch_add(&sums[kErrors], 1ull);
      }
    }
  };

  class Body : public Node {
   public:
    declare_field_types(Body, unsigned, unsigned, int)
    Field<Body, 0> x;
    Field<Body, 1> y;
    Field<Body, 2> id;

    DYNASOAR_HD Body(int i, std::uint64_t seed) : x(body_x(i, 0)), y(body_y(i, 0, seed)), id(i) {
      this->parent = nullptr;
      this->child_index = -1;
    }

    DYNASOAR_HD void move(std::uint64_t seed, int step) {
      x = body_x(id, step);
      y = body_y(id, step, seed);
    }

    /// A body that left its slot's cell leaves the tree.
    DYNASOAR_HD void clear() {
      Inner* up = this->parent;
      if (up == nullptr) return;
      int slot = -1;
      if constexpr (kReads == Reads::kOriginal) {
        slot = this->child_index;
      } else {
        for (int k = 0; k < 4; ++k)
          if (static_cast<Node*>(up->children[k]) == this) slot = k;
      }
      const std::uint64_t code = morton(x, y);
      const int d = up->depth;
      const bool stays = (code >> (2 * (kBits - d))) == static_cast<std::uint64_t>(up->prefix) &&
                         digit(code, d) == slot;
      if (stays) return;
      up->children[slot] = nullptr;
      this->parent = nullptr;
    }

    // snippet-begin: wait
    static DYNASOAR_HD Node* read_slot(Node** slot) {
      if constexpr (kReads == Reads::kAtomic)
        return platform::atomic_load(slot, platform::acquire);
      else
        return *slot;
    }
    static DYNASOAR_HD bool swap_slot(Node** slot, Node* expected, Node* desired) {
      if constexpr (kReads == Reads::kAtomic) {
        return platform::atomic_compare_exchange(slot, expected, desired, platform::acq_rel);
      } else {
        platform::thread_fence();
        return platform::atomic_compare_exchange(slot, expected, desired);
      }
    }

    /// Inserts a body that is not in the tree (the original's add_to_tree).
    /// failures[0] counts second CASes that failed and `new`s that returned
    /// null, neither of which may happen.
    DYNASOAR_HD void insert(Inner* root, Alloc alloc, ull* failures) {
      if (static_cast<Inner*>(this->parent) != nullptr) return;
      const std::uint64_t code = morton(x, y);
      Inner* current = root;
      for (;;) {
        const int d = current->depth;
        Node** slot = &current->children[digit(code, d)];
        Node* child = read_slot(slot);
        if (child == nullptr) {
          if (!swap_slot(slot, nullptr, this)) continue;
          // The second step of this insertion: a thread that splits this
          // slot meanwhile waits for it (below).
          Inner* none = nullptr;
          if (!platform::atomic_compare_exchange(&this->parent, none, current, platform::acq_rel))
            platform::atomic_fetch_add(failures, 1ull);
          if constexpr (kReads == Reads::kOriginal) this->child_index = digit(code, d);
          return;
        }
        if (Inner* inner = dynasoar::cast<Inner>(child)) {
          current = inner;
          continue;
        }
        Body* other = dynasoar::cast<Body>(child);
        Inner* fresh = new (alloc) Inner(current, digit(code, d));
        if (fresh == nullptr) {
          platform::atomic_fetch_add(failures, 1ull);
          return;
        }
        fresh->children[digit(morton(other->x, other->y), d + 1)] = other;
        if (swap_slot(slot, other, fresh)) {
          // `other` moved down; its inserter may not have set its parent yet.
          Inner* expected = current;
          while (!platform::atomic_compare_exchange(&other->parent, expected, fresh,
                                                    platform::acq_rel))
            expected = current;
          if constexpr (kReads == Reads::kOriginal)
            other->child_index = digit(morton(other->x, other->y), d + 1);
          current = fresh;
        } else {
          dynasoar::destroy(alloc, fresh);  // another thread split the slot first
        }
      }
    }
    // snippet-end: wait

    DYNASOAR_HD void verify(Inner* root, ull* sums) {
      const std::uint64_t code = morton(x, y);
      Node* below = this;
      Inner* up = this->parent;
      int levels = 0, expect_depth = -1;
      bool ok = up != nullptr;
      while (ok && up != nullptr) {
        const int d = up->depth;
        if (expect_depth >= 0 && d != expect_depth) ok = false;
        if (d < 0 || d >= kBits || static_cast<Node*>(up->children[digit(code, d)]) != below)
          ok = false;
        expect_depth = d - 1;
        below = up;
        up = up->parent;
        ++levels;
      }
      if (below != root || expect_depth != -1) ok = false;
      platform::atomic_fetch_add(&sums[kBodies], 1ull);
      platform::atomic_fetch_add(&sums[ok ? kChecksum : kErrors], ok ? term(id, levels) : 1ull);
    }
  };
};

/// The canonical tree of step `step`: its node count and checksum.
struct Reference {
  std::uint64_t inner = 0;
  unsigned long long checksum = 0;
};
inline Reference reference(int bodies, int step, std::uint64_t seed) {
  std::vector<std::pair<std::uint64_t, int>> codes(static_cast<std::size_t>(bodies));
  for (int i = 0; i < bodies; ++i)
    codes[static_cast<std::size_t>(i)] = {morton(body_x(i, step), body_y(i, step, seed)), i};
  std::sort(codes.begin(), codes.end());
  // Digits two codes share from the top.
  const auto common = [](std::uint64_t a, std::uint64_t b) {
    int n = 0;
    while (n < kBits && digit(a, n) == digit(b, n)) ++n;
    return n;
  };
  Reference r;
  std::vector<int> shared(codes.size(), 0);  // with the next code
  for (std::size_t i = 0; i + 1 < codes.size(); ++i)
    shared[i] = common(codes[i].first, codes[i + 1].first);
  for (std::size_t i = 0; i < codes.size(); ++i) {
    const int before = i > 0 ? shared[i - 1] : 0, after = i + 1 < codes.size() ? shared[i] : 0;
    r.checksum += term(codes[i].second, std::max(before, after) + 1);
  }
  // A node at depth L >= 1 for every L-digit prefix that two or more bodies
  // share: a run of codes whose neighbours share at least L digits; the root.
  r.inner = 1;
  for (int level = 1; level < kBits; ++level)
    for (std::size_t i = 0; i + 1 < codes.size(); ++i)
      if (shared[i] >= level && (i == 0 || shared[i - 1] < level)) ++r.inner;
  return r;
}

}  // namespace dynasoar::test::tree

namespace dynasoar::test::tree {

/// The root, made by a kernel (new in device code).
template <class W>
struct MakeRoot {
  typename W::Alloc alloc;
  typename W::Inner** out;
  DYNASOAR_HD void operator()(std::size_t) const {
    *out = new (alloc) typename W::Inner(nullptr, 0);
  }
};

/// What one step's tree holds, as the objects report it.
struct StepResult {
  std::uint64_t bodies = 0, inner = 0, errors = 0, failures = 0;
  unsigned long long checksum = 0;
};

/// Makes `bodies` bodies and a root in `heap`, then runs `steps` steps
/// (move, clear, insert, collapse) and verifies the tree after each;
/// `after(step, result)` is called after each step.
template <class W, class After>
void run_steps(typename W::Handle& heap, int bodies, int steps, std::uint64_t seed, After&& after) {
  using ull = unsigned long long;
  using Body = typename W::Body;
  using Inner = typename W::Inner;
  platform::Buffer<Inner*> root_out(1);
  platform::parallel_for(1, MakeRoot<W>{heap.device(), root_out.data()}, heap.stream());
  heap.check_errors();
  Inner* const root = root_out.to_vector()[0];
  platform::Buffer<ull> failures(1), sums(kSums);
  platform::Buffer<int> deepest(1);
  failures.zero();
  heap.template parallel_new<Body>(static_cast<std::size_t>(bodies), seed);
  for (int step = 0; step < steps; ++step) {
    if (step > 0) heap.template parallel_do<Body, &Body::move>(seed, step);
    heap.template parallel_do<Body, &Body::clear>();
    heap.template parallel_do<Body, &Body::insert>(root, heap.device(), failures.data());
    deepest.zero();
    heap.template parallel_do<Inner, &Inner::note_depth>(deepest.data());
    for (int d = deepest.to_vector()[0]; d >= 1; --d)
      heap.template parallel_do<Inner, &Inner::collapse>(d, heap.device());
    sums.zero();
    heap.template parallel_do<Body, &Body::verify>(root, sums.data());
    heap.template parallel_do<Inner, &Inner::verify>(sums.data());
    const std::vector<ull> s = sums.to_vector();
    StepResult r;
    r.bodies = s[kBodies];
    r.inner = s[kInner];
    r.errors = s[kErrors];
    r.checksum = s[kChecksum];
    r.failures = failures.to_vector()[0];
    after(step, r);
  }
}

}  // namespace dynasoar::test::tree
