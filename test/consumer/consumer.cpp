// A small program of a user's own, built as the README tells (see
// run_consumer.cmake): as app.cu in a CUDA project, as app.cpp in a host one.
// It uses what a newcomer reaches for first (classes with fields and
// inheritance, parallel_new / parallel_do, new and destroy in a method,
// is_a / cast, random numbers, a lambda in parallel_for) and checks the
// results, so a broken include path, target, flag or package config fails the
// test instead of only the compile.
#include <cstdio>
#include <vector>

#include <dynasoar/dynasoar.h>

// One include root: the library is reached as <dynasoar/...> and nothing else
// of the repository (its tests, examples, or the library's folders as
// top-level names) is on a consumer's include path.
#if __has_include(<platform/atomic.h>) || __has_include(<test/support/rng.h>) || \
    __has_include(<example/common/cli.h>) || __has_include(<dynasoar/debug.h>) == 0
#error "the include path of dynasoar::dynasoar is not include/ alone"
#endif

class Particle;
class Heavy;
using AllocatorT = dynasoar::Allocator<Particle, Heavy>;

class Particle : public AllocatorT::Base {
 public:
  declare_field_types(Particle, float, int)
  Field<Particle, 0> x;
  Field<Particle, 1> id;

  DYNASOAR_HD explicit Particle(int i) : x(dynasoar::random_float(1, static_cast<unsigned>(i), 0, 0)), id(i) {}
  DYNASOAR_HD void step(AllocatorT alloc, unsigned long long* heavy);  // uses Heavy: defined below
};

class Heavy : public Particle {
 public:
  declare_field_types(Heavy, float)
  Field<Heavy, 0> mass;
  DYNASOAR_HD explicit Heavy(int i) : Particle(i), mass(2.0f) {}
};

// snippet-begin: step
DYNASOAR_HD void Particle::step(AllocatorT alloc, unsigned long long* heavy) {
  x += 1.0f;
  if (dynasoar::is_a<Heavy>(this)) dynasoar::platform::atomic_fetch_add(heavy, 1ull);
  if (id % 10 == 0 && dynasoar::cast<Heavy>(this) == nullptr) {  // every tenth light one turns heavy
    new (alloc) Heavy(id);
    dynasoar::destroy(alloc, this);
  }
}
// snippet-end: step

int main() {
  dynasoar::AllocatorHandle<AllocatorT> heap(16 << 20);
  heap.parallel_new<Particle>(1000);
  dynasoar::platform::Buffer<unsigned long long> heavy(1);
  heavy.zero();
  heap.parallel_do<Particle, &Particle::step>(heap.device(), heavy.data());
  heap.parallel_do<Particle, &Particle::step>(heap.device(), heavy.data());
  const unsigned long long seen = heavy.to_vector()[0];

  // snippet-begin: lambda
  dynasoar::platform::Buffer<int> squares(100);
  int* out = squares.data();
  dynasoar::platform::parallel_for(100, [out] DYNASOAR_HD(std::size_t i) { out[i] = static_cast<int>(i * i); });
  const std::vector<int> sq = squares.to_vector();
  // snippet-end: lambda

  const bool ok = heap.count<Particle>() == 1000 && heap.count<Heavy>() == 100 && seen == 100 &&
                  sq[99] == 99 * 99;
  std::printf("consumer: %llu particles, %llu heavy, %s\n",
              static_cast<unsigned long long>(heap.count<Particle>()),
              static_cast<unsigned long long>(heap.count<Heavy>()), ok ? "OK" : "WRONG");
  return ok ? 0 : 1;
}
