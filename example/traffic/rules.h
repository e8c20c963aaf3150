// The rules of the traffic model (a Nagel-Schreckenberg cellular automaton on
// a street network, in the variant of the original DynaSOAr's traffic
// example), shared by the object version and the hand-written baseline so
// that both compute exactly the same thing.
//
// A step has four phases, each one parallel loop:
//   1. Producer cells without a car make one with probability 2 %.
//   2. Traffic lights: every kLightPhase steps an intersection turns the
//      street that had green red and the next one green.
//   3. Every car plans (plan_move): it speeds up by 1 or 2 up to its own
//      maximum, walks ahead up to that many cells (choosing among a street's
//      successors at random at intersections) and stops before an occupied
//      cell and after a target, obeys the speed limits of the cells it
//      would pass (a red light is a limit of 0) and slows down by one with
//      probability 20 %.
//   4. Every car moves to the last cell of its plan; a car that reaches a
//      target cell (or a dead end) leaves the network and is removed.
//
// No two cars ever enter one cell in a step, so the moves need no
// arbitration: a plan passes only cells that were free when it was made; a
// street's cells have one predecessor each, and the first cells of the
// streets leaving an intersection are reached only through the one street
// that has green there (a red light's cell has limit 0: no car enters it and
// the car on it stays). On a street, the first car ahead ends the plan of
// the car behind it. So the result is a function of seed and network alone,
// whatever the order in which threads run.
//
// Random numbers come from each object's own RandomStream (dynasoar/random.h),
// kept in a field (an array in the baseline): a producer's is keyed by its
// cell, a car's by its producer's cell and that producer's count of draws at
// the car's birth. Unlike the original, a car draws a successor only where
// there is a choice, and no cell is both a producer and a target (a car made
// on a target could never leave it).
#pragma once

#include <cstdint>

#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/config.h"
#include "dynasoar/random.h"

namespace dynasoar::example::traffic {

// Parameters of the model (those of the original example's configuration.h).
enum Parameter : int {
  kMaxVelocity = 10,      // cells per step; a street's limit is 5 to 9, a car's maximum 5 to 9
  kMaxDegree = 4,         // streets leaving (and ending at) an intersection, at most
  kLightPhase = 5,        // steps a light stays green
  kNewCarPerMille = 20,   // chance of a free producer to make a car in a step
  kSlowDownPercent = 20,  // chance of a car to slow down by one after planning
  kProducerPerMille = 20,    // street cells that produce cars (network.cpp)
  kTargetPerTenThousand = 30  // street cells that remove the cars reaching them (network.cpp)
};

/// The length of a cell in the unit square: a street of length d has
/// floor(d / kCellLength) cells after its first (network.cpp).
inline constexpr double kCellLength = 0.005;

/// A cell's static properties (Network::flags).
enum CellFlag : std::uint8_t {
  kProducer = 1,  // makes cars (ProducerCell in the object version)
  kTarget = 2,    // cars that reach it leave the network
  kLight = 4      // the last cell of a street: its intersection's light for it, red at the start
};

/// The network's arrays as kernels read them (device copies of Network's).
struct NetView {
  int cells = 0;
  int intersections = 0;
  const std::int32_t* exit = nullptr;
  const std::uint8_t* speed = nullptr;
  const std::uint8_t* flags = nullptr;
  const std::int32_t* out = nullptr;
  const std::uint8_t* out_degree = nullptr;
  const std::int32_t* in = nullptr;
  const std::uint8_t* in_degree = nullptr;

  /// How many cells follow cell c (0: a dead end, which only a degenerate
  /// network has).
  DYNASOAR_HD int out_count(int c) const { return exit[c] < 0 ? 1 : out_degree[exit[c]]; }
  /// The k-th cell after cell c.
  DYNASOAR_HD int out_cell(int c, int k) const { return exit[c] < 0 ? c + 1 : out[exit[c] * kMaxDegree + k]; }
};

/// A producer's random stream.
DYNASOAR_HD inline RandomStream producer_stream(std::uint64_t seed, int cell) {
  return RandomStream(seed, static_cast<std::uint64_t>(cell));
}

/// Whether a free producer makes a car this step (one draw).
DYNASOAR_HD inline bool makes_car(RandomStream& producer) {
  return producer.below(1000) < static_cast<std::uint32_t>(kNewCarPerMille);
}

/// A new car's maximum velocity, 5 to 9 (one draw of the producer's).
DYNASOAR_HD inline int new_car_max_velocity(RandomStream& producer) {
  return kMaxVelocity / 2 + static_cast<int>(producer.below(kMaxVelocity / 2));
}

/// A new car's random stream: apart from every producer's (bit 63) and from
/// every other car's (its producer's cell and that producer's count of draws).
DYNASOAR_HD inline RandomStream car_stream(std::uint64_t seed, int producer_cell, const RandomStream& producer) {
  return RandomStream(seed, (std::uint64_t{1} << 63) | (static_cast<std::uint64_t>(producer_cell) << 32) |
                                producer.position());
}

/// A light's timer after a step, and whether its green moves on now.
DYNASOAR_HD inline bool light_switches(int& timer) {
  timer = timer + 1 == kLightPhase ? 0 : timer + 1;
  return timer == 0;
}

/// Phase 3 for a car on cell `here` (the original's step_prepare_path).
/// `road` answers, for a cell reference of type Ref (a Cell* in the object
/// version, an index in the baseline): free(c), stops(c) (a target or a
/// dead end), limit(c) (the speed allowed there now: 0 at a red light),
/// out_count(c) and out(c, k). Writes the cells the car passes to
/// path[0, velocity) and returns the new velocity; the car moves to
/// path[velocity - 1].
template <class Road, class Ref>
DYNASOAR_HD int plan_move(const Road& road, Ref here, RandomStream& rng, int velocity, int max_velocity,
                          Ref (&path)[kMaxVelocity]) {
  // Speed up by 1 or 2.
  velocity += 1 + static_cast<int>(rng.below(2));
  if (velocity > max_velocity) velocity = max_velocity;

  // Walk ahead: successors chosen at random, up to the first occupied cell,
  // ending at a target.
  int length = 0;
  Ref cell = here;
  while (length < velocity && !road.stops(cell)) {
    const int n = road.out_count(cell);
    const Ref next = road.out(cell, n > 1 ? static_cast<int>(rng.below(static_cast<std::uint32_t>(n))) : 0);
    if (!road.free(next)) break;
    path[length++] = next;
    cell = next;
  }
  velocity = length;

  // Speed limits: the cell it is on (a red light holds it), then each cell
  // it would enter. A car faster than the limit of the d-th cell slows down
  // to that limit if it still reaches that cell, and stops before it if not.
  if (velocity > road.limit(here)) velocity = road.limit(here);
  for (int d = 1; d <= velocity; ++d) {
    const int limit = road.limit(path[d - 1]);
    if (velocity <= limit) continue;
    if (limit >= d) {
      velocity = limit;
    } else {
      velocity = d - 1;
      break;
    }
  }

  // Random slowdown (always drawn, so that a car's draws do not depend on its speed).
  if (rng.below(100) < static_cast<std::uint32_t>(kSlowDownPercent) && velocity > 0) --velocity;
  return velocity;
}

/// A car's term of the checksum: its cell, velocity, maximum and how many
/// random numbers it drew (which depends on every choice it made). The
/// checksum is the sum over all cars (mod 2^64), so it does not depend on
/// the order in which cars are added.
DYNASOAR_HD inline std::uint64_t checksum_term(int cell, int velocity, int max_velocity, std::uint32_t draws) {
  const std::uint64_t state = (static_cast<std::uint64_t>(draws) << 16) |
                              (static_cast<std::uint64_t>(static_cast<std::uint8_t>(max_velocity)) << 8) |
                              static_cast<std::uint8_t>(velocity);
  return platform::mix64(platform::mix64(static_cast<std::uint64_t>(cell)) ^ state);
}

/// The bits of the viewer's byte for a cell (frame_byte).
enum FrameBit : std::uint8_t { kFrameCar = 1, kFrameRed = 2 };

/// The viewer's byte for a cell: a car on it, a red light.
DYNASOAR_HD inline std::uint8_t frame_byte(bool car, bool red) {
  return static_cast<std::uint8_t>((car ? kFrameCar : 0) | (red ? kFrameRed : 0));
}

}  // namespace dynasoar::example::traffic
