// The quadtree insertion of tree_insert.h as a program, on the back end the
// build selects, to run apart from the test suite (under a time limit): with
// --plain the insertion reads child slots with plain loads, as the original
// DynaSOAr's program does; with --original also keeps each body's slot in a
// field as the original does (written by two threads unordered); otherwise
// with the acquire loads the guide asks for. Prints one line per run and
// exits 0 if every step's tree was exact.
//
//   tree_insert_probe [--plain | --original] BODIES STEPS SEED
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "api/tree_insert.h"

namespace tree = dynasoar::test::tree;

template <tree::Reads kReads>
int run(int bodies, int steps, std::uint64_t seed) {
  using W = tree::World<dynasoar::backend::Selected, kReads>;
  typename W::Handle heap(std::uint64_t{256} << 20);
  int wrong = 0;
  tree::run_steps<W>(heap, bodies, steps, seed, [&](int step, const tree::StepResult& r) {
    const tree::Reference want = tree::reference(bodies, step, seed);
    const bool ok = r.failures == 0 && r.errors == 0 &&
                    r.bodies == static_cast<std::uint64_t>(bodies) && r.inner == want.inner &&
                    r.checksum == want.checksum;
    if (!ok) {
      ++wrong;
      std::printf(
          "step %d: bodies %llu, nodes %llu (want %llu), errors %llu, failures %llu, checksum %s\n",
          step, static_cast<unsigned long long>(r.bodies), static_cast<unsigned long long>(r.inner),
          static_cast<unsigned long long>(want.inner), static_cast<unsigned long long>(r.errors),
          static_cast<unsigned long long>(r.failures),
          r.checksum == want.checksum ? "right" : "wrong");
    }
  });
  const char* name = kReads == tree::Reads::kAtomic  ? "atomic"
                     : kReads == tree::Reads::kPlain ? "plain"
                                                     : "original";
  std::printf("%s reads, %d bodies, %d steps, seed %llu: %s\n", name, bodies, steps,
              static_cast<unsigned long long>(seed),
              wrong == 0 ? "every tree exact" : "WRONG TREES");
  return wrong == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  int a = 1;
  const bool plain = argc > 1 && std::strcmp(argv[1], "--plain") == 0;
  const bool original = argc > 1 && std::strcmp(argv[1], "--original") == 0;
  if (plain || original) ++a;
  if (argc - a != 3) {
    std::fprintf(stderr, "usage: tree_insert_probe [--plain | --original] BODIES STEPS SEED\n");
    return 2;
  }
  const int bodies = std::atoi(argv[a]), steps = std::atoi(argv[a + 1]);
  const auto seed = static_cast<std::uint64_t>(std::strtoull(argv[a + 2], nullptr, 10));
  if (original) return run<tree::Reads::kOriginal>(bodies, steps, seed);
  return plain ? run<tree::Reads::kPlain>(bodies, steps, seed)
               : run<tree::Reads::kAtomic>(bodies, steps, seed);
}
