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

std::string run_state(const std::string& identity, int step, const std::vector<std::uint64_t>& counts) {
  std::string s = std::string(kStateHeader) + "\n" + identity + "\nstep " + std::to_string(step) + "\n";
  // A fourth line only where the run has counts, so that the other runs'
  // states stay as they were.
  if (!counts.empty()) {
    s += "counts";
    for (const std::uint64_t k : counts) s += " " + std::to_string(k);
    s += "\n";
  }
  return s;
}

std::vector<std::uint64_t> saved_counts(const std::string& state, std::size_t n, const std::string& path) {
  std::istringstream in(state);
  std::string line;
  for (int i = 0; i < 4; ++i) std::getline(in, line);  // header, identity, step, counts
  std::vector<std::uint64_t> counts;
  if (line.rfind("counts", 0) == 0) {
    std::istringstream numbers(line.substr(6));
    std::uint64_t k = 0;
    while (numbers >> k) counts.push_back(k);
    if (!numbers.eof()) counts.clear();
  }
  if (counts.size() != n)
    throw std::invalid_argument("--resume: " + path + " holds " + std::to_string(counts.size()) +
                                " of the run's " + std::to_string(n) + " counts");
  return counts;
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
