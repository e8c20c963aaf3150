// The street network, laid out on the host from the seed (as the original
// example lays out its intersections on the host), so that the object
// version and the baseline simulate the same streets. Host code; every
// random number is a Philox value keyed by the seed and counted by what it
// is for, and every length is computed here in double precision, so the
// network is the same on every machine.
#include <climits>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "example/traffic/rules.h"
#include "example/traffic/traffic.h"

namespace dynasoar::example::traffic {
namespace {

// What a random number of the network is for (part of the Philox counter).
enum Purpose : std::uint32_t {
  kDegree = 0,
  kX = 1,
  kY = 2,
  kDestination = 3,
  kSpeed = 4,
  kProducerCell = 5,
  kTargetCell = 6
};

// Random tries for a street's destination before the first one with room is taken.
constexpr int kTries = 64;

}  // namespace

Network build_network(int intersections, std::uint64_t seed) {
  if (intersections < 2) throw std::invalid_argument("traffic: the network needs at least 2 intersections");
  const auto draw = [seed](std::uint32_t a, std::uint32_t b, Purpose p) { return random_u32(seed, a, b, p); };
  const auto n = static_cast<std::size_t>(intersections);
  Network net;
  net.intersections = intersections;
  net.out.assign(n * kMaxDegree, -1);
  net.out_degree.assign(n, 0);
  net.in.assign(n * kMaxDegree, -1);
  net.in_degree.assign(n, 0);

  std::vector<double> node_x(n), node_y(n);
  std::vector<int> degree(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto id = static_cast<std::uint32_t>(i);
    degree[i] = 1 + static_cast<int>(random_below(draw(id, 0, kDegree), kMaxDegree));
    node_x[i] = random_unit_float(draw(id, 0, kX));
    node_y[i] = random_unit_float(draw(id, 0, kY));
  }

  // Each street goes to a random other intersection where fewer than
  // kMaxDegree streets end (the original draws until it finds one). After
  // kTries misses the first such intersection after the last try is taken;
  // where there is none at all, the intersection keeps the streets it has.
  struct Street {
    int from, to;
  };
  std::vector<Street> streets;
  streets.reserve(n * 3);
  std::vector<int> ending(n, 0);  // streets that end at each intersection so far
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < degree[i]; ++k) {
      int to = -1;
      std::uint32_t r = 0;
      for (int t = 0; t < kTries && to < 0; ++t) {
        r = random_below(draw(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(k * kTries + t), kDestination),
                         static_cast<std::uint32_t>(n));
        if (r != i && ending[r] < kMaxDegree) to = static_cast<int>(r);
      }
      for (std::size_t s = 1; s < n && to < 0; ++s) {
        const std::size_t j = (r + s) % n;
        if (j != i && ending[j] < kMaxDegree) to = static_cast<int>(j);
      }
      if (to < 0) break;
      streets.push_back(Street{static_cast<int>(i), to});
      ++ending[static_cast<std::size_t>(to)];
    }
  }

  // The cells, street by street: the first at its intersection, then one
  // per kCellLength of the way, the last being the destination's light.
  std::size_t cells = 0;
  for (std::size_t s = 0; s < streets.size(); ++s) {
    const Street& st = streets[s];
    const auto from = static_cast<std::size_t>(st.from), to = static_cast<std::size_t>(st.to);
    const double dx = node_x[to] - node_x[from], dy = node_y[to] - node_y[from];
    const auto after = static_cast<std::size_t>(std::sqrt(dx * dx + dy * dy) / kCellLength);
    if (cells + after + 1 > static_cast<std::size_t>(INT_MAX))
      throw std::invalid_argument("traffic: " + std::to_string(intersections) +
                                  " intersections make more than 2^31 - 1 cells");
    const auto id = static_cast<std::uint32_t>(s);
    const auto speed = static_cast<std::uint8_t>(kMaxVelocity / 2 + random_below(draw(id, 0, kSpeed), kMaxVelocity / 2));
    const std::size_t first = cells;
    for (std::size_t j = 0; j <= after; ++j) {
      std::uint8_t flags = 0;
      if (j > 0) {
        const auto cell_draw = static_cast<std::uint32_t>(j);
        if (random_below(draw(id, cell_draw, kProducerCell), 1000) < kProducerPerMille)
          flags = kProducer;
        else if (random_below(draw(id, cell_draw, kTargetCell), 10000) < kTargetPerTenThousand)
          flags = kTarget;
      }
      if (j == after) flags |= kLight;
      const double f = static_cast<double>(j) / static_cast<double>(after + 1);
      net.exit.push_back(j == after ? st.to : -1);
      net.speed.push_back(speed);
      net.flags.push_back(flags);
      net.x.push_back(static_cast<float>(node_x[from] + f * dx));
      net.y.push_back(static_cast<float>(node_y[from] + f * dy));
      net.producers += (flags & kProducer) != 0 ? 1 : 0;
    }
    cells += after + 1;
    // An intersection's streets leave and end in the order they were drawn.
    net.out[from * kMaxDegree + net.out_degree[from]++] = static_cast<std::int32_t>(first);
    net.in[to * kMaxDegree + net.in_degree[to]++] = static_cast<std::int32_t>(cells - 1);
  }
  return net;
}

}  // namespace dynasoar::example::traffic
