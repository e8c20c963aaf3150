// A first dynasoar program: one class with three fields, a heap handle,
// parallel_new to create the objects, parallel_do to run a method on every
// object (with an argument), count<T>() and statistics<T>() to look at the
// heap, and check_errors(). It checks its results against a plain host loop.
// Next: docs/guide/writing-classes.md, then docs/guide/operations.md.
#include <cstdint>
#include <cstdio>
#include <vector>

#include <dynasoar/dynasoar.h>

class Ball;
using AllocatorT = dynasoar::Allocator<Ball>;  // every class that is allocated

constexpr int kBalls = 1000;
constexpr int kWall = 100;  // balls bounce between 0 and kWall
constexpr int kSteps = 30;

// The rules of one step, shared by the objects and the host check below.
DYNASOAR_HD inline int start_speed(int i) { return 1 + i % 7; }
DYNASOAR_HD inline void bounce(int& pos, int& vel, int& bounces) {
  if (pos > kWall) { pos = 2 * kWall - pos; vel = -vel; bounces += 1; }
  if (pos < 0) { pos = -pos; vel = -vel; bounces += 1; }
}

class Ball : public AllocatorT::Base {
 public:
  declare_field_types(Ball, int, int, int)  // field types, in order
  Field<Ball, 0> pos;
  Field<Ball, 1> vel;
  Field<Ball, 2> bounces;

  // parallel_new<Ball>(n, args...) calls Ball(i, args...) for i < n.
  DYNASOAR_HD Ball(int i, int start) : pos(start), vel(start_speed(i)), bounces(0) {}

  DYNASOAR_HD void move(int dt) {
    // Fields read like ints; copy them out to call a function that takes int&.
    int p = pos + vel * dt, v = vel, b = bounces;
    bounce(p, v, b);
    pos = p;
    vel = v;
    bounces = b;
  }

  // Many threads add at once, so the sums need atomics.
  DYNASOAR_HD void add_to(unsigned long long* sums) {
    const int p = pos, b = bounces;
    dynasoar::platform::atomic_fetch_add(&sums[0], static_cast<unsigned long long>(p));
    dynasoar::platform::atomic_fetch_add(&sums[1], static_cast<unsigned long long>(b));
  }
};

int main() {
  dynasoar::AllocatorHandle<AllocatorT> heap(16 << 20);  // 16 MiB heap
  heap.parallel_new<Ball>(kBalls, 10);                   // Ball(i, 10) for i < kBalls
  for (int step = 0; step < kSteps; ++step) heap.parallel_do<Ball, &Ball::move>(3);  // dt = 3

  // Results the host reads live in a Buffer: device memory in a CUDA build.
  dynasoar::platform::Buffer<unsigned long long> sums(2);
  sums.zero();
  heap.parallel_do<Ball, &Ball::add_to>(sums.data());
  const std::vector<unsigned long long> got = sums.to_vector();

  // The same simulation on the host, ball by ball.
  unsigned long long want_pos = 0, want_bounces = 0;
  for (int i = 0; i < kBalls; ++i) {
    int p = 10, v = start_speed(i), b = 0;
    for (int step = 0; step < kSteps; ++step) { p += v * 3; bounce(p, v, b); }
    want_pos += static_cast<unsigned long long>(p);
    want_bounces += static_cast<unsigned long long>(b);
  }

  // One entry per concrete class: here only Ball.
  std::uint64_t seen = 0;
  for (const dynasoar::TypeStatistics& st : heap.statistics<Ball>()) {
    std::printf("type %u: %llu objects in %llu blocks of %u slots, %.0f %% of slots unused\n",
                st.type_id, static_cast<unsigned long long>(st.objects),
                static_cast<unsigned long long>(st.blocks), st.capacity, st.fragmentation() * 100);
    seen += st.objects;
  }
  heap.check_errors();  // throws dynasoar::OutOfMemory if a `new` had failed; none did here

  const bool ok = heap.count<Ball>() == kBalls && seen == kBalls && got[0] == want_pos &&
                  got[1] == want_bounces;
  std::printf("heap_basics: %d balls, position sum %llu (host %llu), bounces %llu (host %llu): "
              "%s\n",
              kBalls, got[0], want_pos, got[1], want_bounces, ok ? "OK" : "WRONG");
  return ok ? 0 : 1;
}
