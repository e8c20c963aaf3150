// Progress lines for long runs: every N steps or every T seconds, one line
// with the step, the steps per second, the time left and values the program
// adds (an object count). Plain C++: no CUDA, so any source file may
// include it.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace dynasoar::support {

/// When Progress prints a line and what the line holds.
struct ProgressOptions {
  /// Starts every line: "NAME: step ..." (no prefix if empty).
  std::string name;
  /// Steps of the whole run, shown after the step and used for the time
  /// left; 0 if not known (no total, no time left).
  std::int64_t total_steps = 0;
  /// A line at every step that is a multiple of this (0: none by steps).
  std::int64_t every_steps = 0;
  /// A line at a step when this many seconds or more have passed since the
  /// last line (or the start); 0: none by time.
  double every_seconds = 1.0;
  /// No lines at all (a --quiet flag); values are then never read.
  bool quiet = false;
  /// Steps per second and the time left on each line; false: the step and
  /// the values only.
  bool rate = true;
};

/// Prints progress lines for a loop of steps, of the form
///
///     NAME: step S / TOTAL, RATE steps/s, TIME left, LABEL VALUE, ...
///
/// (TIME as "42 s", "1 min 32 s" or "3 h 5 min").
/// Call step(s) after each step. The rate is that of the steps since the
/// previous line, the time left assumes it stays so. It counts host time:
/// in a CUDA build a step that only queues kernels returns before the GPU
/// runs them, and the rate is that of the GPU once the launch queue is full
/// or a value (a count) waits for the GPU. Host code; not thread-safe.
class Progress {
 public:
  /// Seconds on some fixed scale; Progress only subtracts two readings.
  using Clock = std::function<double()>;

  /// Seconds of std::chrono::steady_clock: the default clock.
  static double steady_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }

  /// A reporter that writes its lines to `out` and reads the time from
  /// `clock` (tests pass a clock of their own). The run starts now: the
  /// first line's rate counts from here.
  explicit Progress(ProgressOptions options, std::ostream& out = std::cerr, Clock clock = &steady_seconds)
      : options_(std::move(options)), out_(&out), clock_(std::move(clock)) {
    restart();
  }

  /// Starts the run again at step 0, now (after a set-up that should not
  /// count towards the first rate).
  void restart() {
    last_step_ = 0;
    last_seconds_ = clock_();
  }

  /// Adds "label value" to every line, in the order added; `value()` is
  /// called only when a line is printed (it may wait for the GPU, as a
  /// count of objects does) and its result is written with operator<<.
  template <class F>
  Progress& add_value(std::string label, F value) {
    values_.push_back(Value{std::move(label), [value = std::move(value)](std::ostream& o) { o << value(); }});
    return *this;
  }

  /// Step `step` has ended: prints a line if it is due (every_steps,
  /// every_seconds) and the reporter is not quiet. Returns whether it printed.
  bool step(std::int64_t step) {
    if (options_.quiet) return false;
    const double now = clock_();
    const bool by_steps = options_.every_steps > 0 && step % options_.every_steps == 0;
    const bool by_time = options_.every_seconds > 0 && now - last_seconds_ >= options_.every_seconds;
    if (!by_steps && !by_time) return false;
    emit(step, now);
    return true;
  }

  /// Prints the line of `step` now, due or not (the last step of a run);
  /// nothing if quiet.
  void print(std::int64_t step) {
    if (!options_.quiet) emit(step, clock_());
  }

  /// The line of `step` at time `now` on the reporter's clock, without
  /// its newline, as step() would print it; reads the values but changes
  /// nothing.
  std::string line(std::int64_t step, double now) const {
    std::ostringstream o;
    if (!options_.name.empty()) o << options_.name << ": ";
    o << "step " << step;
    if (options_.total_steps > 0) o << " / " << options_.total_steps;
    const double seconds = now - last_seconds_;
    if (options_.rate && seconds > 0 && step > last_step_) {
      const double rate = static_cast<double>(step - last_step_) / seconds;
      o << ", " << rate_text(rate) << " steps/s";
      if (options_.total_steps > 0 && step <= options_.total_steps)
        o << ", " << duration_text(static_cast<double>(options_.total_steps - step) / rate) << " left";
    }
    for (const Value& v : values_) {
      o << ", " << v.label << " ";
      v.write(o);
    }
    return o.str();
  }

  /// "41.5", "3.25", "1234": three digits or more, no exponent.
  static std::string rate_text(double rate) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*f", rate >= 100 ? 0 : rate >= 10 ? 1 : 2, rate);
    return buf;
  }

  /// "42 s", "1 min 32 s", "3 h 5 min": whole seconds, the two largest units.
  static std::string duration_text(double seconds) {
    const auto s = static_cast<std::int64_t>(std::llround(seconds < 0 ? 0 : seconds));
    char buf[64];
    if (s < 60)
      std::snprintf(buf, sizeof buf, "%lld s", static_cast<long long>(s));
    else if (s < 3600)
      std::snprintf(buf, sizeof buf, "%lld min %lld s", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
    else
      std::snprintf(buf, sizeof buf, "%lld h %lld min", static_cast<long long>(s / 3600),
                    static_cast<long long>(s % 3600 / 60));
    return buf;
  }

 private:
  struct Value {
    std::string label;
    std::function<void(std::ostream&)> write;
  };

  void emit(std::int64_t step, double now) {
    *out_ << line(step, now) << "\n";
    last_step_ = step;
    last_seconds_ = now;
  }

  ProgressOptions options_;
  std::ostream* out_;
  Clock clock_;
  std::vector<Value> values_;
  std::int64_t last_step_ = 0;
  double last_seconds_ = 0;
};

}  // namespace dynasoar::support
