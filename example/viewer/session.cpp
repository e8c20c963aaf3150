#include "example/viewer/session.h"

#include <cstdio>
#include <stdexcept>
#include <utility>

#include "dynasoar/support/snapshots.h"

namespace dynasoar::example::viewer {

Session::Session(const Options& o, std::string name, std::string title, int steps,
                 std::unique_ptr<Window> window)
    : options_(o), title_(std::move(title)) {
  if (options_.every < 1) throw std::invalid_argument("--every: at least 1");
  single_ = steps == 0;
  if (!options_.snapshot_dir.empty()) {
    try {
      snapshots_ = std::make_unique<support::Snapshots>(options_.snapshot_dir, std::move(name), steps);
    } catch (const std::runtime_error& e) {
      throw std::invalid_argument(std::string("--snapshot: ") + e.what());
    }
  }
  if (options_.render) {
    window_ = window != nullptr ? std::move(window) : open_window(title_);
    update_title();
  }
}

Session::~Session() = default;

std::string Session::snapshot_path(int step) const {
  if (!snapshots_) throw std::logic_error("snapshot_path: no --snapshot folder");
  return snapshots_->path(step);
}

void Session::show(int step, int width, int height, const std::function<void(Canvas&)>& draw,
                   const std::string& population) {
  if (canvas_.width() != width || canvas_.height() != height) canvas_.resize(width, height);
  draw(canvas_);
  step_ = step;
  population_ = population;
  if (snapshots_) snapshots_->write(step, canvas_);
  if (window_ == nullptr) return;

  window_->present(canvas_);
  ++fps_frames_;
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - fps_since_).count();
  if (seconds >= 0.5) {
    fps_ = fps_frames_ / seconds;
    fps_frames_ = 0;
    fps_since_ = now;
  }
  for (Event e = window_->next_event(0); e != Event::kNone; e = window_->next_event(0)) handle(e);
  update_title();
  // Paused: wait for keys, presenting again now and then so that a resized
  // window is redrawn (not every window system reports it).
  while (paused_ && !step_once_) {
    const Event e = window_->next_event(50);
    handle(e);
    window_->present(canvas_);
    if (e != Event::kNone) update_title();
  }
  step_once_ = false;
  // After a pause the rate restarts rather than count the time waited.
  if (fps_frames_ == 0 || paused_) {
    fps_since_ = std::chrono::steady_clock::now();
    fps_frames_ = 0;
  }
}

void Session::hold() {
  if (window_ == nullptr || !options_.hold) return;
  finished_ = true;
  update_title();
  for (;;) {
    const Event e = window_->next_event(100);
    if (e == Event::kQuit) return;
    window_->present(canvas_);
  }
}

void Session::handle(Event e) {
  switch (e) {
    case Event::kQuit:
      throw Quit{step_};
    case Event::kPause:
      paused_ = !paused_;
      break;
    case Event::kStep:
      if (paused_) step_once_ = true;
      break;
    default:
      break;
  }
}

void Session::update_title() {
  std::string t = title_;
  if (!single_) t += " | step " + std::to_string(step_);
  if (!population_.empty()) t += " | " + population_;
  if (!single_) {
    char fps[32];
    std::snprintf(fps, sizeof fps, " | %.1f fps", fps_);
    t += fps;
  }
  if (finished_)
    t += " | finished (q: quit)";
  else if (paused_)
    t += " | paused (space: go on, n: next frame, q: quit)";
  if (window_ != nullptr) window_->set_title(t);
}

}  // namespace dynasoar::example::viewer
