// Checkpoints of a large heap (not a test): a heap of --heap-mib (default
// 1 GiB) filled to --fill of its blocks with bodies in a table, each
// pointing to another, and links pointing to two bodies; then
//
//   save: save_checkpoint into a file in --dir (host wall clock of the call:
//         the copy of the blocks to the host, the walk, the write);
//   load: load_checkpoint of that file into a new heap of the same size
//         (the read, the walk, the copy of the blocks to the device); the
//         new heap is made before the clock starts and dropped after it stops.
//
// Each --reps times (median and minimum; save after one untimed warm-up);
// the file is removed at the end.
// The file system's speed is part of both times.
// Usage: checkpoint_bench [--heap-mib N] [--fill F] [--reps R] [--dir DIR] [--csv FILE]
#include <cuda_runtime.h>
#include <dynasoar/dynasoar.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/support/gpu_bench.h"

namespace {

class Body;
class Link;
using Alloc = dynasoar::SoaAllocator<Body, Link>;
using Handle = dynasoar::AllocatorHandle<Alloc>;

class Body : public Alloc::Base {
 public:
  declare_field_types(Body, float, float, float, float, int, Body*)
  Field<Body, 0> x;
  Field<Body, 1> y;
  Field<Body, 2> vx;
  Field<Body, 3> vy;
  Field<Body, 4> id;
  Field<Body, 5> next;
  DYNASOAR_HD explicit Body(int i)
      : x(static_cast<float>(i)), y(0.5f), vx(0.0f), vy(1.0f), id(i), next(nullptr) {}
  DYNASOAR_HD void link(dynasoar::ObjectIndex<Alloc, Body> bodies) {
    next = bodies[(static_cast<std::size_t>(static_cast<int>(id)) * 7 + 1) % bodies.size()];
  }
};

class Link : public Alloc::Base {
 public:
  declare_field_types(Link, Body*, Body*, float)
  Field<Link, 0> a;
  Field<Link, 1> b;
  Field<Link, 2> weight;
  DYNASOAR_HD Link(int i, dynasoar::ObjectIndex<Alloc, Body> bodies)
      : a(bodies[static_cast<std::size_t>(i) % bodies.size()]),
        b(bodies[(static_cast<std::size_t>(i) * 3 + 2) % bodies.size()]),
        weight(static_cast<float>(i)) {}
};

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t heap_mib = 1024;
  double fill = 0.8;
  int reps = 3;
  std::string dir = ".", csv;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--heap-mib")
      heap_mib = std::stoull(value());
    else if (a == "--fill")
      fill = std::stod(value());
    else if (a == "--reps")
      reps = std::stoi(value());
    else if (a == "--dir")
      dir = value();
    else if (a == "--csv")
      csv = value();
    else
      throw std::invalid_argument("unknown option " + a +
                                  "; usage: checkpoint_bench [--heap-mib N] [--fill F] [--reps R] "
                                  "[--dir DIR] [--csv FILE]");
  }
  const std::uint64_t heap_bytes = heap_mib << 20;
  // Bodies take two thirds of the blocks to be filled, links the rest (two links per three bodies).
  const std::uint64_t blocks =
      static_cast<std::uint64_t>(static_cast<double>(heap_bytes / Handle::kBlockBytes) * fill);
  constexpr unsigned kBodyCap = Alloc::Registry::kCapacityById[0];
  const std::uint64_t bodies = blocks * 2 / 3 * kBodyCap;

  Handle heap(heap_bytes);
  const auto table = heap.parallel_new_indexed<Body>(bodies);
  heap.parallel_do<Body, &Body::link>(table.index());
  heap.parallel_new<Link>(bodies * 2 / 3, table.index());
  const std::uint64_t objects = heap.count<Body>() + heap.count<Link>();
  const std::filesystem::path file = std::filesystem::path(dir) / "checkpoint_bench.ckpt";

  dynasoar::bench::Csv out(csv,
                           {"benchmark: checkpoints", "date: " + dynasoar::bench::utc_now(),
                            "device: " + dynasoar::bench::device_description(),
                            "command: " + dynasoar::bench::command_line(argc, argv),
                            "timing: host wall clock of the blocking call, median of reps (one "
                            "untimed warm-up)",
                            "columns: heap_mib, blocks in use, objects, file_mib; times in s"},
                           "bench,heap_mib,blocks_used,objects,file_mib,median_s,min_s,reps");
  const auto row = [&](const char* bench, const dynasoar::bench::Timing& t) {
    char line[256];
    std::snprintf(line, sizeof line, "%s,%llu,%llu,%llu,%llu,%.3f,%.3f,%d", bench,
                  static_cast<unsigned long long>(heap_mib),
                  static_cast<unsigned long long>(heap.allocated_blocks()),
                  static_cast<unsigned long long>(objects),
                  static_cast<unsigned long long>(std::filesystem::file_size(file) >> 20),
                  t.median_ms / 1e3, t.min_ms / 1e3, t.reps);
    out.line(line);
  };

  const dynasoar::bench::Timing save = dynasoar::bench::time_host(
      [&] { heap.save_checkpoint(file, "checkpoint_bench"); }, [] {}, 1, reps);
  row("save", save);
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    Handle other(heap_bytes);  // made and dropped outside the clock
    const auto t0 = std::chrono::steady_clock::now();
    other.load_checkpoint(file);
    const auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (other.count<Body>() + other.count<Link>() != objects)
      throw std::logic_error(
          "checkpoint_bench: the loaded heap has other objects than the saved one");
  }
  row("load", {dynasoar::bench::median(ms), *std::min_element(ms.begin(), ms.end()), reps});
  std::filesystem::remove(file);
  return 0;
}
