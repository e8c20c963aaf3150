// PhaseTimer's pause and resume: the time between them counts towards no
// phase and not towards the total, and the phase that was running goes on;
// and its medians, which a single long mark does not move.
// The paused stretches are long and the counted ones short, so that the
// bounds hold on a loaded machine; in a CUDA build the marks are events on
// an idle stream, which record when the host queues them. Under
// compute-sanitizer (DYNASOAR_SANITIZER=1, several tools at a time) queueing
// an event takes up to milliseconds and the records lag: every sleep and
// every bound is then kSlow times longer, so that the same margins hold.
#include "dynasoar/support/phase_timer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "support/sanitized.h"

namespace dynasoar::support {
namespace {

const double kSlow = test::under_sanitizer() ? 5.0 : 1.0;

void sleep_ms(int ms) {
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms * kSlow));
}

TEST(PhaseTimer, CountsTheTimeBetweenMarks) {
  platform::Stream stream;
  PhaseTimer timer(stream);
  timer.start();
  sleep_ms(20);
  timer.mark("a");
  sleep_ms(300);
  timer.mark("b");
  EXPECT_GE(timer.total_ms(), 315.0 * kSlow);
  EXPECT_GE(timer.phases_ms().at("b"), 295.0 * kSlow);
}

TEST(PhaseTimer, LeavesOutThePausedTime) {
  platform::Stream stream;
  PhaseTimer timer(stream);
  timer.start();
  sleep_ms(20);
  timer.pause();
  sleep_ms(400);
  timer.resume();
  sleep_ms(20);
  timer.mark("a");
  const double total = timer.total_ms();
  EXPECT_GE(total, 38.0 * kSlow);
  EXPECT_LT(total, 300.0 * kSlow);
  ASSERT_EQ(timer.phases_ms().size(), 1u);  // no phase for the pause
  EXPECT_DOUBLE_EQ(timer.phases_ms().at("a"), total);
}

TEST(PhaseTimer, PauseBetweenPhasesTouchesNeither) {
  platform::Stream stream;
  PhaseTimer timer(stream);
  timer.start();
  sleep_ms(20);
  timer.mark("a");
  timer.pause();
  sleep_ms(400);
  timer.resume();
  sleep_ms(20);
  timer.mark("b");
  EXPECT_LT(timer.phases_ms().at("a"), 300.0 * kSlow);
  EXPECT_GE(timer.phases_ms().at("b"), 19.0 * kSlow);
  EXPECT_LT(timer.phases_ms().at("b"), 300.0 * kSlow);
  EXPECT_LT(timer.total_ms(), 400.0 * kSlow);
}

TEST(PhaseTimer, PausesSurviveTheBatchedHarvest) {
  // More marks than one batch (512), each step with a pause: the paused time
  // must stay out however the marks are split between harvests.
  platform::Stream stream;
  PhaseTimer timer(stream);
  timer.start();
  for (int i = 0; i < 400; ++i) {
    timer.mark("step");
    timer.pause();
    if (i % 100 == 0) sleep_ms(100);
    timer.resume();
  }
  timer.mark("step");
  EXPECT_LT(timer.total_ms(), 250.0 * kSlow);
  EXPECT_EQ(timer.phases_ms().size(), 1u);
}

TEST(PhaseTimer, MedianIgnoresOneLongMark) {
  platform::Stream stream;
  PhaseTimer timer(stream);
  timer.start();
  for (int i = 0; i < 4; ++i) {
    sleep_ms(i == 0 ? 300 : 10);
    timer.mark("step");
  }
  sleep_ms(10);
  timer.mark("other");
  const std::map<std::string, PhaseStats> stats = timer.stats();
  ASSERT_EQ(stats.size(), 2u);
  const PhaseStats& step = stats.at("step");
  EXPECT_EQ(step.count, 4u);
  EXPECT_GE(step.median_ms, 9.0 * kSlow);
  EXPECT_LT(step.median_ms, 200.0 * kSlow);
  EXPECT_DOUBLE_EQ(step.total_ms, timer.phases_ms().at("step"));
  EXPECT_EQ(stats.at("other").count, 1u);
  EXPECT_DOUBLE_EQ(stats.at("other").median_ms, stats.at("other").total_ms);

  std::ostringstream table;
  timer.print(table);
  EXPECT_NE(table.str().find("step"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("4 marks"), std::string::npos) << table.str();
}

}  // namespace
}  // namespace dynasoar::support
