// device_do: inside a method, alloc.device_do<T, &T::method>(args...) runs the
// method on every object of T, one after the other, in the calling thread.
// Here each of 1000 Particles feels the pull of all 8 Attractors, then each
// Attractor counts the Particles near it; every result is compared with a
// plain host loop. Next: docs/guide/operations.md ("device_do"), then
// docs/guide/backends.md (the same program on other allocators).
#include <cstdio>
#include <vector>

#include <dynasoar/dynasoar.h>

class Particle;
class Attractor;
using AllocatorT = dynasoar::Allocator<Particle, Attractor>;

constexpr int kParticles = 1000, kAttractors = 8, kSteps = 20, kNear = 40;

// Shared by the objects and the host check. Integers only, so that the
// result does not depend on the order in which the threads run.
DYNASOAR_HD inline int sign(int v) { return (v > 0) - (v < 0); }
DYNASOAR_HD inline int particle_x(int i) { return (i * 37) % 1000; }
DYNASOAR_HD inline int attractor_x(int i) { return 62 + 125 * i; }
DYNASOAR_HD inline int attractor_mass(int i) { return 1 + i; }

class Particle : public AllocatorT::Base {
 public:
  declare_field_types(Particle, int, int, int)
  Field<Particle, 0> id;
  Field<Particle, 1> x;
  Field<Particle, 2> pull;  // sum over all attractors of mass * direction

  DYNASOAR_HD explicit Particle(int i) : id(i), x(particle_x(i)), pull(0) {}
  DYNASOAR_HD void feel(AllocatorT alloc);        // use Attractor: defined below it
  DYNASOAR_HD void count_if_near(Attractor* a);
  // A phase of its own: every particle has felt the pull before any moves.
  DYNASOAR_HD void move(int* out) {
    x += sign(pull);
    out[static_cast<int>(id)] = x;
  }
};

class Attractor : public AllocatorT::Base {
 public:
  declare_field_types(Attractor, int, int, int, int)
  Field<Attractor, 0> id;
  Field<Attractor, 1> x;
  Field<Attractor, 2> mass;
  Field<Attractor, 3> nearby;  // particles within kNear

  DYNASOAR_HD explicit Attractor(int i)
      : id(i), x(attractor_x(i)), mass(attractor_mass(i)), nearby(0) {}
  // Called by a particle's thread: it writes only that particle's field.
  DYNASOAR_HD void pull_on(Particle* p) { p->pull += mass * sign(x - p->x); }
  DYNASOAR_HD void count(AllocatorT alloc, int* out) {
    nearby = 0;
    alloc.device_do<Particle, &Particle::count_if_near>(this);  // 1000 calls in this thread
    out[static_cast<int>(id)] = nearby;
  }
};

DYNASOAR_HD void Particle::feel(AllocatorT alloc) {
  pull = 0;
  alloc.device_do<Attractor, &Attractor::pull_on>(this);  // every attractor, one after the other
}
DYNASOAR_HD void Particle::count_if_near(Attractor* a) {
  const int d = x - a->x;
  if (d >= -kNear && d <= kNear) a->nearby += 1;
}

int main() {
  dynasoar::AllocatorHandle<AllocatorT> heap(16 << 20);
  heap.parallel_new<Particle>(kParticles);
  heap.parallel_new<Attractor>(kAttractors);
  dynasoar::platform::Buffer<int> xs(kParticles), nearby(kAttractors);
  for (int s = 0; s < kSteps; ++s) {
    heap.parallel_do<Particle, &Particle::feel>(heap.device());
    heap.parallel_do<Particle, &Particle::move>(xs.data());
  }
  heap.parallel_do<Attractor, &Attractor::count>(heap.device(), nearby.data());

  // The same on the host: every particle against every attractor.
  std::vector<int> want_x(kParticles), want_near(kAttractors, 0);
  for (int i = 0; i < kParticles; ++i) {
    int x = particle_x(i);
    for (int s = 0; s < kSteps; ++s) {
      int pull = 0;
      for (int a = 0; a < kAttractors; ++a) pull += attractor_mass(a) * sign(attractor_x(a) - x);
      x += sign(pull);
    }
    want_x[i] = x;
    for (int a = 0; a < kAttractors; ++a) {
      const int d = x - attractor_x(a);
      if (d >= -kNear && d <= kNear) want_near[a] += 1;
    }
  }

  const std::vector<int> got_near = nearby.to_vector();
  int total_near = 0;
  for (int n : got_near) total_near += n;
  const bool ok = xs.to_vector() == want_x && got_near == want_near;
  std::printf("device_do: %d particles x %d attractors, %d steps; %d particles near an attractor; "
              "positions and counts %s the host's\n",
              kParticles, kAttractors, kSteps, total_near, ok ? "match" : "DIFFER from");
  return ok ? 0 : 1;
}
