// One model over several ranks: each rank (a GPU, or a thread with a heap
// of its own in the host build) owns a stretch of a ring and the particles
// on it. Particles move every step; those that left their rank's stretch
// migrate to the rank that owns their new place: packed, sent, made again
// there, destroyed here. Counts and sums come from all-reduces; the program
// checks that no particle was lost or made twice.
// Run: learn_distributed [ranks] (default: 3 on the CPU, every GPU on a
// GPU machine). Next: docs/guide/distributed.md.
#include <cstdio>
#include <cstdlib>

#include <dynasoar/dynasoar.h>

#include "dynasoar/distributed/migrate.h"
#include "dynasoar/distributed/run.h"

namespace distributed = dynasoar::distributed;

class Particle;
using AllocatorT = dynasoar::Allocator<Particle>;

constexpr int kRing = 1000;      // places on the ring
constexpr int kParticles = 600;  // particles, made on rank 0
constexpr int kSteps = 25;

// snippet-begin: owner
/// The rank that owns place p: the ring cut into `ranks` stretches.
DYNASOAR_HD inline int owner_of(int p, int ranks) { return static_cast<int>(static_cast<long long>(p) * ranks / kRing); }

class Particle : public AllocatorT::Base {
 public:
  declare_field_types(Particle, int, int, int)
  Field<Particle, 0> id;
  Field<Particle, 1> place;
  Field<Particle, 2> speed;

  DYNASOAR_HD Particle(int i) : id(i), place(i * 7 % kRing), speed(1 + i % 13) {}

  DYNASOAR_HD void move() { place = (place + speed) % kRing; }
  /// Called on the rank a particle moved to, once it is made there.
  DYNASOAR_HD void arrived(unsigned long long* arrivals) { dynasoar::platform::atomic_fetch_add(arrivals, 1ull); }
  DYNASOAR_HD void check(int rank, int ranks, unsigned long long* sums) {
    dynasoar::platform::atomic_fetch_add(&sums[0], static_cast<unsigned long long>(id));
    if (owner_of(place, ranks) != rank) dynasoar::platform::atomic_fetch_add(&sums[1], 1ull);
  }
};

/// migrate's owner function: a struct with a device operator().
struct Owner {
  int ranks;
  DYNASOAR_HD int operator()(const Particle* p) const { return owner_of(p->place, ranks); }
};
// snippet-end: owner

int main(int argc, char** argv) {
  const int gpus = distributed::visible_gpus();
  const int ranks = argc > 1 ? std::atoi(argv[1]) : gpus > 0 ? gpus : 3;
  int failures = 0;
  // snippet-begin: run
  distributed::run_ranks(ranks, [&](distributed::Communicator& comm) {
    dynasoar::AllocatorHandle<AllocatorT> heap(4 << 20);  // this rank's heap
    if (comm.rank() == 0) heap.parallel_new<Particle>(kParticles);
    dynasoar::platform::Buffer<unsigned long long> arrivals(1);
    arrivals.zero();
    const Owner owner{comm.size()};
    distributed::migrate<Particle, &Particle::arrived>(heap, comm, owner, arrivals.data());  // to their owners
    for (int step = 1; step <= kSteps; ++step) {
      heap.parallel_do<Particle, &Particle::move>();
      distributed::migrate<Particle, &Particle::arrived>(heap, comm, owner, arrivals.data());
    }
    // snippet-end: run
    heap.check_errors();
    dynasoar::platform::Buffer<unsigned long long> sums(2);
    sums.zero();
    heap.parallel_do<Particle, &Particle::check>(comm.rank(), comm.size(), sums.data());
    const std::vector<unsigned long long> local = sums.to_vector();
    const auto count = comm.all_reduce<std::uint64_t>(heap.count<Particle>());
    const auto id_sum = comm.all_reduce<std::uint64_t>(local[0]);
    const auto misplaced = comm.all_reduce<std::uint64_t>(local[1]);
    const auto arrived = comm.all_reduce<std::uint64_t>(arrivals.to_vector()[0]);
    if (comm.rank() != 0) return;
    const unsigned long long expected_sum = static_cast<unsigned long long>(kParticles) * (kParticles - 1) / 2;
    std::printf("%d ranks (%s): %llu particles (expected %d), id sum %llu (expected %llu), %llu misplaced, "
                "%llu arrivals\n",
                comm.size(), comm.transport().name(), static_cast<unsigned long long>(count), kParticles,
                static_cast<unsigned long long>(id_sum), expected_sum, static_cast<unsigned long long>(misplaced),
                static_cast<unsigned long long>(arrived));
    if (count != kParticles || id_sum != expected_sum || misplaced != 0 || (comm.size() > 1 && arrived == 0))
      failures = 1;
  });
  std::printf(failures == 0 ? "learn_distributed: OK\n" : "learn_distributed: FAILED\n");
  return failures;
}
