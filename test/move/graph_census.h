// The object graph of graph_model.h at work, for the tests of objects that
// move (compaction, checkpoints): build it, fragment it (most objects die
// while new ones are made, so the survivors sit in scattered slots of many
// blocks), and take its census: per object its id, a hash of its fields
// and of the ids its pointers lead to, and the pointers that lead to no
// live object of a right class. A census is the same before and after a
// move exactly when every object and every pointer survived it.
#pragma once

#include <dynasoar/dynasoar.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#define MOVE_TEST_ALLOCATOR dynasoar::SoaAllocator
#define MOVE_TEST_NAMESPACE soa_graph
#include "move/graph_model.h"
#undef MOVE_TEST_ALLOCATOR
#undef MOVE_TEST_NAMESPACE
#define MOVE_TEST_ALLOCATOR dynasoar::BitmapAllocator
#define MOVE_TEST_NAMESPACE aos_graph
#include "move/graph_model.h"
#undef MOVE_TEST_ALLOCATOR
#undef MOVE_TEST_NAMESPACE

namespace move_test {

using dynasoar::platform::Buffer;

template <class Ns>
struct Model;
struct SoaTag {};
struct AosTag {};
#define MOVE_TEST_MODEL(TagT, ns)                                     \
  template <>                                                         \
  struct Model<TagT> {                                                \
    using Alloc = ns::Alloc;                                          \
    using NodeBase = ns::NodeBase;                                    \
    using Node = ns::Node;                                            \
    using Anchor = ns::Anchor;                                        \
    using Spring = ns::Spring;                                        \
    using Tag = ns::Tag;                                              \
    DYNASOAR_HD static constexpr int degree() { return ns::kDegree; } \
  };
MOVE_TEST_MODEL(SoaTag, soa_graph)
MOVE_TEST_MODEL(AosTag, aos_graph)
#undef MOVE_TEST_MODEL

enum Kind : unsigned { kNode = 0, kAnchor = 1, kSpring = 2, kTag = 3, kKinds = 4 };
constexpr std::uint32_t kBorn = 1u << 20;  // ids of objects made during the destroying do-all

DYNASOAR_HD inline bool dies(unsigned kind, std::uint32_t id) {
  return dynasoar::platform::mix64(kind * 1000003ull + id) % 10 < 7;
}

/// Builds the graph: n nodes (every fifth an Anchor), m springs, m tags.
template <class M>
struct Create {
  typename M::Alloc alloc;
  typename M::NodeBase** nodes;
  typename M::Spring** springs;
  typename M::Tag** tags;
  std::size_t n, m;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const auto id = static_cast<std::uint32_t>(i);
    if (i < n) {
      if (i % 5 == 0)
        nodes[i] = new (alloc) typename M::Anchor(id);
      else
        nodes[i] = new (alloc) typename M::Node(id);
    }
    if (i < m) {
      springs[i] = new (alloc) typename M::Spring(id);
      tags[i] = new (alloc) typename M::Tag(id);
    }
  }
};

template <class M>
struct Link {
  typename M::NodeBase** nodes;
  typename M::Spring** springs;
  typename M::Tag** tags;
  std::size_t n, m;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (i < n) {
      typename M::NodeBase* node = nodes[i];
      for (int d = 0; d < M::degree(); ++d) node->springs[d] = springs[(i * M::degree() + d) % m];
      node->degree = M::degree();
      if (M::Alloc::template is_a<typename M::Node>(node))
        static_cast<typename M::Node*>(node)->buddy = nodes[(i * 13 + 5) % n];
    }
    if (i < m) {
      springs[i]->a = nodes[i % n];
      springs[i]->b = nodes[(i * 7 + 1) % n];
      tags[i]->spring = springs[(i * 3) % m];
    }
  }
};

template <class M>
DYNASOAR_HD unsigned kind_of(const void* p) {
  if (M::Alloc::template is_a<typename M::Anchor>(p)) return kAnchor;
  if (M::Alloc::template is_a<typename M::Node>(p)) return kNode;
  if (M::Alloc::template is_a<typename M::Spring>(p)) return kSpring;
  return kTag;
}

/// Nulls every pointer to an object that the next do-all destroys (all
/// objects are still alive during this one).
template <class M>
struct Unlink {
  DYNASOAR_HD void operator()(typename M::NodeBase* node) const {
    for (int d = 0; d < M::degree(); ++d) {
      typename M::Spring* s = node->springs[d];
      if (s != nullptr && dies(kSpring, s->id)) node->springs[d] = nullptr;
    }
    if (M::Alloc::template is_a<typename M::Node>(node)) {
      auto* self = static_cast<typename M::Node*>(node);
      typename M::NodeBase* b = self->buddy;
      if (b != nullptr && dies(kind_of<M>(b), b->id)) self->buddy = nullptr;
    }
  }
  DYNASOAR_HD void operator()(typename M::Spring* s) const {
    typename M::NodeBase* a = s->a;
    typename M::NodeBase* b = s->b;
    if (a != nullptr && dies(kind_of<M>(a), a->id)) s->a = nullptr;
    if (b != nullptr && dies(kind_of<M>(b), b->id)) s->b = nullptr;
  }
  DYNASOAR_HD void operator()(typename M::Tag* t) const {
    typename M::Spring* s = t->spring;
    if (s != nullptr && dies(kSpring, s->id)) t->spring = nullptr;
  }
};

/// Destroys the objects that die; every third dying spring makes a new
/// tag at the same time (allocation beside the destroys).
template <class M>
struct Kill {
  typename M::Alloc alloc;
  template <class C>
  DYNASOAR_HD void operator()(C* obj) const {
    const unsigned kind = kind_of<M>(obj);
    const std::uint32_t id = obj->id;
    if (id >= kBorn || !dies(kind, id)) return;
    if (kind == kSpring && id % 3 == 0) new (alloc) typename M::Tag(kBorn + id);
    dynasoar::destroy(alloc, obj);
  }
};

/// Per object: counts its id, adds a hash of its fields and of the ids its
/// pointers lead to, and counts pointers that lead to no live object of a
/// right class and fields whose values changed.
template <class M>
struct Census {
  dynasoar::soa::HeapState* heap;
  unsigned* seen;           // [kind][id]: kKinds * (2 * kBorn)
  unsigned long long* out;  // [0] signature, [1] objects, [2] bad pointers, [3] bad values
  DYNASOAR_HD bool live(const void* p, std::uint64_t classes) const {
    const auto bits = reinterpret_cast<std::uint64_t>(p);
    const unsigned type = dynasoar::soa::pointer_type(bits);
    if (((classes >> type) & 1u) == 0) return false;
    const std::uint64_t offset = dynasoar::soa::pointer_block(bits) - heap->blocks;
    if (offset >= std::uint64_t{heap->free_blocks.capacity()} * heap->block_bytes) return false;
    const auto block = static_cast<dynasoar::bit_index>(offset / heap->block_bytes);
    // A freed block keeps its last class in its header and sets every bit
    // of its allocation bitmap: only the class's block bitmap tells.
    if (!heap->allocated[type].get(block) || heap->header(block)->type != type) return false;
    return ((heap->live_slots(block, type) >> dynasoar::soa::pointer_slot(bits)) & 1u) != 0;
  }
  template <class P>
  DYNASOAR_HD std::uint64_t follow(P* p) const {
    if (p == nullptr) return 0x9e37;
    using Registry = typename M::Alloc::Registry;
    if (!live(p, Registry::template kConcreteSubtypes<P>)) {
      dynasoar::platform::atomic_fetch_add(out + 2, 1ull);
      return 1;
    }
    return p->id + 1ull;
  }
  DYNASOAR_HD void add(unsigned kind, std::uint32_t id, std::uint64_t h, bool values_ok) const {
    dynasoar::platform::atomic_fetch_add(seen + kind * (2 * kBorn) + id, 1u);
    dynasoar::platform::atomic_fetch_add(
        out, static_cast<unsigned long long>(
                 dynasoar::platform::mix64(h ^ (std::uint64_t{kind} << 40 | id))));
    dynasoar::platform::atomic_fetch_add(out + 1, 1ull);
    if (!values_ok) dynasoar::platform::atomic_fetch_add(out + 3, 1ull);
  }
  DYNASOAR_HD void operator()(typename M::NodeBase* node) const {
    std::uint64_t h = static_cast<std::uint64_t>(static_cast<int>(node->degree));
    for (int d = 0; d < M::degree(); ++d)
      h = dynasoar::platform::mix64(h + follow<typename M::Spring>(node->springs[d]));
    const unsigned kind = kind_of<M>(node);
    bool ok = node->degree == M::degree();
    if (kind == kNode) {
      auto* self = static_cast<typename M::Node*>(node);
      h = dynasoar::platform::mix64(h + follow<typename M::NodeBase>(self->buddy));
      ok = ok && static_cast<float>(self->pos) == static_cast<float>(node->id) * 0.5f;
    } else {
      ok = ok &&
           static_cast<double>(static_cast<typename M::Anchor*>(node)->weight) == node->id * 2.0;
    }
    add(kind, node->id, h, ok);
  }
  DYNASOAR_HD void operator()(typename M::Spring* s) const {
    const std::uint64_t h = dynasoar::platform::mix64(follow<typename M::NodeBase>(s->a) * 31 +
                                                      follow<typename M::NodeBase>(s->b));
    add(kSpring, s->id, h, static_cast<float>(s->length) == static_cast<float>(s->id % 7));
  }
  DYNASOAR_HD void operator()(typename M::Tag* t) const {
    const std::uint64_t h = follow<typename M::Spring>(t->spring);
    add(kTag, t->id, h, static_cast<void*>(t->opaque) == reinterpret_cast<void*>(0x5150));
  }
};

struct Summary {
  std::vector<unsigned> seen;
  unsigned long long signature, objects, bad_pointers, bad_values;
};

/// A test over the graph of layout Layout (SoaTag, AosTag): its model M,
/// the heap's handle, and the graph's steps.
template <class Layout>
class GraphTest : public ::testing::Test {
 public:
  using M = Model<Layout>;
  using Handle = dynasoar::AllocatorHandle<typename M::Alloc>;

  static constexpr std::size_t kNodes = 6000, kSprings = 9000;

  template <class H>
  static void build(H& heap) {
    Buffer<typename M::NodeBase*> nodes(kNodes);
    Buffer<typename M::Spring*> springs(kSprings);
    Buffer<typename M::Tag*> tags(kSprings);
    dynasoar::platform::parallel_for(
        kSprings,
        Create<M>{heap.device(), nodes.data(), springs.data(), tags.data(), kNodes, kSprings});
    dynasoar::platform::parallel_for(
        kSprings, Link<M>{nodes.data(), springs.data(), tags.data(), kNodes, kSprings});
    dynasoar::platform::synchronize({});
    heap.check_errors();
  }

  template <class H>
  static void fragment(H& heap) {
    heap.template parallel_do<typename M::NodeBase, &M::NodeBase::template visit<Unlink<M>>>(
        Unlink<M>{});
    heap.template parallel_do<typename M::Spring, &M::Spring::template visit<Unlink<M>>>(
        Unlink<M>{});
    heap.template parallel_do<typename M::Tag, &M::Tag::template visit<Unlink<M>>>(Unlink<M>{});
    const Kill<M> kill{heap.device()};
    heap.template parallel_do<typename M::NodeBase, &M::NodeBase::template visit<Kill<M>>>(kill);
    heap.template parallel_do<typename M::Spring, &M::Spring::template visit<Kill<M>>>(kill);
    heap.template parallel_do<typename M::Tag, &M::Tag::template visit<Kill<M>>>(kill);
  }

  template <class H>
  static Summary census(H& heap) {
    Buffer<unsigned> seen(kKinds * 2 * kBorn);
    Buffer<unsigned long long> out(4);
    seen.zero();
    out.zero();
    const Census<M> c{heap.device().state(), seen.data(), out.data()};
    heap.template parallel_do<typename M::NodeBase, &M::NodeBase::template visit<Census<M>>>(c);
    heap.template parallel_do<typename M::Spring, &M::Spring::template visit<Census<M>>>(c);
    heap.template parallel_do<typename M::Tag, &M::Tag::template visit<Census<M>>>(c);
    const std::vector<unsigned long long> o = out.to_vector();
    return Summary{seen.to_vector(), o[0], o[1], o[2], o[3]};
  }

  static std::uint64_t blocks_of(Handle& heap) {
    std::uint64_t b = 0;
    for (const auto& st : heap.template statistics<typename M::NodeBase>()) b += st.blocks;
    for (const auto& st : heap.template statistics<typename M::Spring>()) b += st.blocks;
    for (const auto& st : heap.template statistics<typename M::Tag>()) b += st.blocks;
    return b;
  }
};

/// Both block layouts, named as their back ends.
using Layouts = ::testing::Types<SoaTag, AosTag>;
class LayoutNames {
 public:
  template <class T>
  static std::string GetName(int) {
    return std::is_same_v<T, SoaTag> ? "dynasoar" : "bitmap_alloc";
  }
};

}  // namespace move_test
