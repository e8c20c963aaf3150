// The constants of the n-body model (rules.h has the physics itself). Plain
// C++ without device annotations, so that the command line (host code) can
// set them.
#pragma once

namespace dynasoar::example::nbody {

/// Constants of the model; passed by value to every kernel.
struct Physics {
  float gravity = 2.0e-6f;         // G in the simulation's units
  float dt = 0.01f;                // time step
  float softening2 = 1.0e-4f;      // Plummer softening length, squared
  float merge_distance = 0.005f;   // collision variant: bodies closer than this merge
  float min_mass = 1.0f, max_mass = 10.0f;
  float max_speed = 0.05f;         // initial velocities in [-max_speed, max_speed]^2
};

}  // namespace dynasoar::example::nbody
