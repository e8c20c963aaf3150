// Progress's lines, on a clock the test sets: when a line is due (by steps,
// by time, never when quiet), what it says (step, total, rate, time left,
// the program's values) and that values are read only for a printed line.
#include "dynasoar/support/progress.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace dynasoar::support {
namespace {

// A clock that stands still until the test moves it.
struct FakeClock {
  double seconds = 100.0;
  Progress::Clock clock() {
    return [this] { return seconds; };
  }
};

TEST(Progress, PrintsOncePerIntervalWithRateAndTimeLeft) {
  FakeClock t;
  std::ostringstream out;
  ProgressOptions o;
  o.name = "wa-tor";
  o.total_steps = 1000;
  o.every_seconds = 1.0;
  Progress p(o, out, t.clock());
  t.seconds += 0.5;
  EXPECT_FALSE(p.step(10));  // half a second: not yet
  t.seconds += 0.5;
  EXPECT_TRUE(p.step(20));  // 20 steps in 1 s; 980 left at 20 steps/s
  t.seconds += 0.25;
  EXPECT_FALSE(p.step(30));
  t.seconds += 1.75;
  EXPECT_TRUE(p.step(100));  // 80 steps in 2 s since the last line; 22.5 s left, rounded
  EXPECT_EQ(out.str(),
            "wa-tor: step 20 / 1000, 20.0 steps/s, 49 s left\n"
            "wa-tor: step 100 / 1000, 40.0 steps/s, 23 s left\n");
}

TEST(Progress, PrintsEveryNStepsWithValues) {
  FakeClock t;
  std::ostringstream out;
  ProgressOptions o;
  o.name = "walkers";
  o.every_steps = 50;
  o.every_seconds = 0;  // by steps only
  int reads = 0;
  Progress p(o, out, t.clock());
  p.add_value("walkers", [&] {
    ++reads;
    return 1234;
  });
  p.add_value("energy", [] { return 0.5; });
  for (int s = 1; s <= 100; ++s) {
    t.seconds += 1.0 / 64;  // exact in binary: the rate is 64 steps/s exactly
    p.step(s);
  }
  // No total: no "/ n" and no time left.
  EXPECT_EQ(out.str(),
            "walkers: step 50, 64.0 steps/s, walkers 1234, energy 0.5\n"
            "walkers: step 100, 64.0 steps/s, walkers 1234, energy 0.5\n");
  EXPECT_EQ(reads, 2);  // read for the printed lines only
}

TEST(Progress, PlainLineWithoutRate) {
  // The examples' form, which bench/examples' scripts parse: "name: step s / n".
  FakeClock t;
  std::ostringstream out;
  ProgressOptions o;
  o.name = "n-body";
  o.total_steps = 300;
  o.rate = false;
  Progress p(o, out, t.clock());
  t.seconds += 3;
  EXPECT_TRUE(p.step(7));
  EXPECT_EQ(out.str(), "n-body: step 7 / 300\n");
}

TEST(Progress, QuietPrintsNothingAndReadsNoValue) {
  FakeClock t;
  std::ostringstream out;
  ProgressOptions o;
  o.quiet = true;
  o.every_steps = 1;
  bool read = false;
  Progress p(o, out, t.clock());
  p.add_value("count", [&] {
    read = true;
    return 1;
  });
  t.seconds += 10;
  EXPECT_FALSE(p.step(1));
  p.print(2);
  EXPECT_TRUE(out.str().empty());
  EXPECT_FALSE(read);
}

TEST(Progress, PrintForcesALineAndRestartResetsTheRate) {
  FakeClock t;
  std::ostringstream out;
  ProgressOptions o;
  o.total_steps = 10;
  Progress p(o, out, t.clock());
  t.seconds += 100;  // a long set-up
  p.restart();
  t.seconds += 2;
  p.print(10);  // 10 steps in 2 s since the restart; no name: no prefix
  EXPECT_EQ(out.str(), "step 10 / 10, 5.00 steps/s, 0 s left\n");
  // No time passed: no rate rather than a division by zero.
  EXPECT_EQ(p.line(10, t.seconds), "step 10 / 10");
}

TEST(Progress, TextOfRatesAndDurations) {
  EXPECT_EQ(Progress::rate_text(3.254), "3.25");
  EXPECT_EQ(Progress::rate_text(41.53), "41.5");
  EXPECT_EQ(Progress::rate_text(1234.4), "1234");
  EXPECT_EQ(Progress::duration_text(41.6), "42 s");
  EXPECT_EQ(Progress::duration_text(92), "1 min 32 s");
  EXPECT_EQ(Progress::duration_text(3 * 3600 + 5 * 60 + 59), "3 h 5 min");
  EXPECT_EQ(Progress::duration_text(-1), "0 s");
}

}  // namespace
}  // namespace dynasoar::support
