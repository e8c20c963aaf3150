// The window with SDL2: a streaming texture the size of the canvas, drawn
// with SDL_RenderSetLogicalSize so that the picture keeps its aspect when
// the window is resized.
#include <SDL.h>

#include <algorithm>
#include <stdexcept>

#include "example/viewer/window.h"

namespace dynasoar::example::viewer {
namespace {

class SdlWindow final : public Window {
 public:
  explicit SdlWindow(const std::string& title) {
    if (SDL_Init(SDL_INIT_VIDEO) != 0)
      throw std::runtime_error(
          std::string("--render: cannot open a window (is there a display?): ") + SDL_GetError() +
          "; --snapshot DIR writes PNG files without one");
    // Without a display SDL falls back to drawing nowhere; say so, unless
    // such a driver was asked for (SDL_VIDEODRIVER=dummy in the tests).
    const char* driver = SDL_GetCurrentVideoDriver();
    const std::string name = driver != nullptr ? driver : "";
    if ((name == "offscreen" || name == "dummy") && SDL_getenv("SDL_VIDEODRIVER") == nullptr) {
      SDL_Quit();
      throw std::runtime_error(
          "--render: no display (DISPLAY and WAYLAND_DISPLAY are not set); --snapshot DIR writes "
          "PNG "
          "files without one");
    }
    // Hidden until the first picture gives it its size: a window resized
    // right after it was mapped can keep drawing at its old size.
    window_ = SDL_CreateWindow(title.c_str(), SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, 640,
                               640, SDL_WINDOW_RESIZABLE | SDL_WINDOW_HIDDEN);
    if (window_ != nullptr) renderer_ = SDL_CreateRenderer(window_, -1, 0);
    if (renderer_ == nullptr) {
      const std::string reason = SDL_GetError();
      close();
      throw std::runtime_error("--render: cannot open a window: " + reason);
    }
  }
  ~SdlWindow() override { close(); }

  void present(const Canvas& c) override {
    if (c.width() == 0 || c.height() == 0) return;
    if (texture_ == nullptr || c.width() != texture_width_ || c.height() != texture_height_) {
      if (texture_ != nullptr) SDL_DestroyTexture(texture_);
      // RGBA32: bytes R, G, B, A in memory, as the canvas keeps them.
      texture_ = SDL_CreateTexture(renderer_, SDL_PIXELFORMAT_RGBA32, SDL_TEXTUREACCESS_STREAMING,
                                   c.width(), c.height());
      if (texture_ == nullptr)
        throw std::runtime_error(std::string("viewer: SDL texture: ") + SDL_GetError());
      texture_width_ = c.width();
      texture_height_ = c.height();
      SDL_RenderSetLogicalSize(renderer_, c.width(), c.height());
      if (!sized_) {  // the first picture sets the window's size, at most 1000 pixels on a side
        const double shrink = std::min(1.0, 1000.0 / std::max(c.width(), c.height()));
        SDL_SetWindowSize(window_, static_cast<int>(c.width() * shrink),
                          static_cast<int>(c.height() * shrink));
        SDL_SetWindowPosition(window_, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED);
        SDL_ShowWindow(window_);
        SDL_PumpEvents();
        sized_ = true;
      }
    }
    SDL_UpdateTexture(texture_, nullptr, c.data(), c.width() * 4);
    SDL_SetRenderDrawColor(renderer_, 0, 0, 0, 255);
    SDL_RenderClear(renderer_);
    SDL_RenderCopy(renderer_, texture_, nullptr, nullptr);
    SDL_RenderPresent(renderer_);
  }

  void set_title(const std::string& title) override { SDL_SetWindowTitle(window_, title.c_str()); }

  Event next_event(int timeout_ms) override {
    SDL_Event e;
    const int got = timeout_ms > 0 ? SDL_WaitEventTimeout(&e, timeout_ms) : SDL_PollEvent(&e);
    if (got == 0) return Event::kNone;
    switch (e.type) {
      case SDL_QUIT:
        return Event::kQuit;
      case SDL_KEYDOWN:
        switch (e.key.keysym.sym) {
          case SDLK_q:
          case SDLK_ESCAPE:
            return Event::kQuit;
          case SDLK_SPACE:
            return Event::kPause;
          case SDLK_n:
          case SDLK_RIGHT:
            return Event::kStep;
          default:
            return Event::kRedraw;
        }
      case SDL_WINDOWEVENT:
        return Event::kRedraw;
      default:
        return Event::kRedraw;  // something else: look again
    }
  }

 private:
  void close() {
    if (texture_ != nullptr) SDL_DestroyTexture(texture_);
    if (renderer_ != nullptr) SDL_DestroyRenderer(renderer_);
    if (window_ != nullptr) SDL_DestroyWindow(window_);
    texture_ = nullptr;
    renderer_ = nullptr;
    window_ = nullptr;
    SDL_Quit();
  }

  SDL_Window* window_ = nullptr;
  SDL_Renderer* renderer_ = nullptr;
  SDL_Texture* texture_ = nullptr;
  int texture_width_ = 0, texture_height_ = 0;
  bool sized_ = false;
};

}  // namespace

bool has_window() { return true; }

std::unique_ptr<Window> open_window(const std::string& title) {
  return std::make_unique<SdlWindow>(title);
}

}  // namespace dynasoar::example::viewer
