// A small object graph for the compaction tests, with every kind of pointer
// field the move layer rewrites: a pointer to an abstract class (Spring's
// ends), to a concrete class (Tag's spring), a C array of pointers
// (NodeBase's springs) and a pointer to a base held by a subclass (Node's
// buddy); and one it leaves alone (Tag's void*). Each object has an id, so
// a test can follow every pointer to the id of what it points to.
//
// Included once per block layout: MOVE_TEST_ALLOCATOR names the allocator
// template and MOVE_TEST_NAMESPACE the namespace (no #pragma once).
#include <dynasoar/dynasoar.h>

#include <cstdint>

namespace MOVE_TEST_NAMESPACE {

class NodeBase;
class Node;
class Anchor;
class Spring;
class Tag;
using Alloc = MOVE_TEST_ALLOCATOR<NodeBase, Node, Anchor, Spring, Tag>;

inline constexpr int kDegree = 3;

class NodeBase : public Alloc::Base {
 public:
  declare_abstract_field_types(NodeBase, std::uint32_t, int, Spring* [kDegree])
  Field<NodeBase, 0> id;
  Field<NodeBase, 1> degree;
  Field<NodeBase, 2> springs;
  DYNASOAR_HD explicit NodeBase(std::uint32_t i) : id(i), degree(0) {
    for (int d = 0; d < kDegree; ++d) springs[d] = nullptr;
  }
  /// v(this): a parallel_do runs a test's visitor on every object.
  template <class V>
  DYNASOAR_HD void visit(V v) {
    v(this);
  }
};

class Node : public NodeBase {
 public:
  declare_field_types(Node, float, NodeBase*)
  Field<Node, 0> pos;
  Field<Node, 1> buddy;
  DYNASOAR_HD explicit Node(std::uint32_t i)
      : NodeBase(i), pos(static_cast<float>(i) * 0.5f), buddy(nullptr) {}
};

class Anchor : public NodeBase {
 public:
  declare_field_types(Anchor, double)
  Field<Anchor, 0> weight;
  DYNASOAR_HD explicit Anchor(std::uint32_t i)
      : NodeBase(i), weight(static_cast<double>(i) * 2.0) {}
};

class Spring : public Alloc::Base {
 public:
  declare_field_types(Spring, NodeBase*, NodeBase*, std::uint32_t, float)
  Field<Spring, 0> a;
  Field<Spring, 1> b;
  Field<Spring, 2> id;
  Field<Spring, 3> length;
  DYNASOAR_HD explicit Spring(std::uint32_t i)
      : a(nullptr), b(nullptr), id(i), length(static_cast<float>(i % 7)) {}
  template <class V>
  DYNASOAR_HD void visit(V v) {
    v(this);
  }
};

class Tag : public Alloc::Base {
 public:
  declare_field_types(Tag, Spring*, std::uint32_t, void*)
  Field<Tag, 0> spring;
  Field<Tag, 1> id;
  Field<Tag, 2> opaque;  // not an object pointer: a move copies it as it is
  DYNASOAR_HD explicit Tag(std::uint32_t i)
      : spring(nullptr), id(i), opaque(reinterpret_cast<void*>(0x5150)) {}
  template <class V>
  DYNASOAR_HD void visit(V v) {
    v(this);
  }
};

}  // namespace MOVE_TEST_NAMESPACE
