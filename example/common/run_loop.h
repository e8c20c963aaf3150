// The step loop every simulation shares, on the heap and in its baseline.
#pragma once

#include "dynasoar/support/phase_timer.h"

namespace dynasoar::example {

/// Whether a run hands its state after `step` to the viewer: every
/// simulation's Config has `on_frame` (the viewer's callback, or empty) and
/// `frame_every`.
template <class Config>
bool frame_due(const Config& c, int step) {
  return c.on_frame && c.frame_every > 0 && step % c.frame_every == 0;
}

/// Runs steps `first` to `c.steps` of a simulation (a run resumed from a
/// checkpoint after step k starts at k + 1). Before the first step and after
/// each one where frame_due(c, step) says so, `send_frame(step)`
/// gives the viewer its copy; that copy counts towards no phase of `timer`.
/// `step(s)` queues step s's kernels and marks their phases on `timer`;
/// `c.on_step(s)` (progress output), if set, follows it. Returns once every
/// step is queued: the timer's totals wait for the work.
template <class Config, class Step, class SendFrame>
void run_steps(const Config& c, support::PhaseTimer& timer, Step&& step, SendFrame&& send_frame, int first = 1) {
  if (frame_due(c, first - 1)) send_frame(first - 1);
  timer.start();
  for (int s = first; s <= c.steps; ++s) {
    step(s);
    if (c.on_step) c.on_step(s);
    if (frame_due(c, s)) {
      timer.pause();
      send_frame(s);
      timer.resume();
    }
  }
}

}  // namespace dynasoar::example
