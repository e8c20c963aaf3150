#include "example/common/checkpoint_options.h"

#include <sstream>
#include <stdexcept>

namespace dynasoar::example {

namespace {
// The first line of every run state: a checkpoint of another program says so.
constexpr const char* kStateHeader = "dynasoar example run state";
}  // namespace

std::string run_identity(const RunReport& r) {
  std::string s = r.example + ":";
  bool first = true;
  for (const auto& [key, value] : r.config) {
    if (key == "steps") continue;
    s += (first ? " " : ", ") + key + " " + value;
    first = false;
  }
  return s;
}

std::string run_state(const std::string& identity, int step) {
  return std::string(kStateHeader) + "\n" + identity + "\nstep " + std::to_string(step) + "\n";
}

int resumed_step(const std::string& state, const std::string& identity, int steps,
                 const std::string& path) {
  std::istringstream in(state);
  std::string header, saved, step_line;
  std::getline(in, header);
  std::getline(in, saved);
  std::getline(in, step_line);
  int step = -1;
  if (header == kStateHeader && step_line.rfind("step ", 0) == 0) {
    try {
      step = std::stoi(step_line.substr(5));
    } catch (const std::exception&) {
      step = -1;
    }
  }
  if (step < 0)
    throw std::invalid_argument(
        "--resume: " + path +
        " holds no example's run state; it was not written by --checkpoint-every");
  if (saved != identity)
    throw std::invalid_argument("--resume: " + path + " was saved by the run \"" + saved +
                                "\"; this run is \"" + identity +
                                "\". Resume with the options the checkpoint was written with.");
  if (step > steps)
    throw std::invalid_argument("--resume: " + path + " was saved after step " +
                                std::to_string(step) + ", beyond --steps " + std::to_string(steps));
  return step;
}

void refuse_checkpoints(const CheckpointOptions& c, const std::string& example,
                        const std::string& variant) {
  if (!c.active()) return;
  throw std::invalid_argument(
      "--checkpoint-every and --resume need a heap whose objects can be saved and made "
      "again (the DynaSOAr heap or BitmapAlloc); this program " +
      variant + ". Run " + example + "_dynasoar or " + example + "_bitmap_alloc.");
}

}  // namespace dynasoar::example
