// The physics of n-body (DynaSOAr paper Sec. 6: "N-Body" and its "Collision"
// variant), shared by the object version and the hand-written baseline.
//
// Bodies move in the square [-1, 1]^2 under mutual gravity with Plummer
// softening (a body exerts no force on itself: its distance vector is zero)
// and bounce off the walls. A step: every body sums its acceleration over
// all bodies; then every body moves (semi-implicit Euler). In the collision
// variant three more phases follow: every body picks a merge partner among
// the bodies closer than merge_distance (the heaviest, ties to the lower
// id, only bodies heavier than itself); a body whose partner is not merging
// itself adds its mass, momentum and weighted position to the partner and
// deletes itself; the partners take in what they received.
//
// Sums over bodies run in whatever order the back end enumerates them, so
// results agree between variants up to floating-point rounding, not bit for
// bit; the checksum is compared with a relative tolerance (golden.txt).
#pragma once

#include <cmath>
#include <cstdint>

#include "example/common/fast_math.h"
#include "example/common/philox.h"
#include "example/nbody/physics.h"
#include "dynasoar/platform/config.h"

namespace dynasoar::example::nbody {

/// What a body starts with (index i of n), a function of seed and index.
struct InitialBody {
  float x, y, vx, vy, mass;
};

DYNASOAR_HD inline float unit_random(std::uint64_t seed, std::uint32_t i, std::uint32_t purpose) {
  return static_cast<float>(random_u32(seed, i, 0u, purpose) >> 8) * (1.0f / 16777216.0f);  // [0, 1)
}

DYNASOAR_HD inline InitialBody initial_body(const Physics& p, std::uint64_t seed, int i) {
  const auto u = static_cast<std::uint32_t>(i);
  return {2.0f * unit_random(seed, u, 0) - 1.0f, 2.0f * unit_random(seed, u, 1) - 1.0f,
          p.max_speed * (2.0f * unit_random(seed, u, 2) - 1.0f),
          p.max_speed * (2.0f * unit_random(seed, u, 3) - 1.0f),
          p.min_mass + (p.max_mass - p.min_mass) * unit_random(seed, u, 4)};
}

/// Acceleration that a body of mass m at (ox, oy) gives a body at (x, y),
/// added to (ax, ay). Zero when the two places coincide.
DYNASOAR_HD inline void add_acceleration(const Physics& p, float x, float y, float ox, float oy,
                                         float m, float& ax, float& ay) {
  const float dx = ox - x, dy = oy - y;
  const float r2 = dx * dx + dy * dy + p.softening2;
  const float inv = inverse_sqrt(r2);
  const float s = p.gravity * m * inv * inv * inv;
  ax += s * dx;
  ay += s * dy;
}

/// One coordinate moved by one time step, reflected at the walls of [-1, 1].
DYNASOAR_HD inline void move(const Physics& p, float& x, float& v, float a) {
  move_in_box(p.dt, x, v, a);
}

/// Collision variant: whether a body (mass m, id) may merge into a candidate
/// (mass om, id oid) at squared distance d2, and whether the candidate is a
/// better partner than the best so far (mass bm, id bid; bid < 0: none).
DYNASOAR_HD inline bool may_merge_into(const Physics& p, float d2, float m, int id, float om, int oid) {
  return d2 < p.merge_distance * p.merge_distance && (om > m || (om == m && oid < id));
}
DYNASOAR_HD inline bool better_partner(float om, int oid, float bm, int bid) {
  return bid < 0 || om > bm || (om == bm && oid < bid);
}

/// A body's term of the checksum (summed in double over all bodies).
DYNASOAR_HD inline double checksum_term(float x, float y, float vx, float vy, float m) {
  return static_cast<double>(m) * (std::fabs(static_cast<double>(x)) + std::fabs(static_cast<double>(y)) +
                                   10.0 * (std::fabs(static_cast<double>(vx)) +
                                           std::fabs(static_cast<double>(vy))));
}

}  // namespace dynasoar::example::nbody
