// A distributed program for the NCCL tests that run the launcher
// (nccl_test.cpp): each rank is a process started by dynasoar_launch.
//
//   nccl_rank_program sum          all_reduce of rank + 1; every rank prints the sum
//   nccl_rank_program early-exit   rank 1 exits with 3 before the all_reduce; rank 0
//                                  reports its DistributedError and exits with 2
#include <dynasoar/distributed/run.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace dd = dynasoar::distributed;

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "sum" && mode != "early-exit") {
    std::fprintf(stderr, "usage: nccl_rank_program sum|early-exit (started by dynasoar_launch)\n");
    return 64;
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    dd::run_ranks(1, [&](dd::Communicator& comm) {
      if (mode == "early-exit" && comm.rank() == 1) {
        std::fflush(stdout);
        std::_Exit(3);
      }
      const int sum = comm.all_reduce(comm.rank() + 1);
      std::printf("rank %d of %d: all_reduce sum = %d (%s)\n", comm.rank(), comm.size(), sum,
                  comm.transport().name());
      std::fflush(stdout);
    });
  } catch (const dd::DistributedError& e) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("DistributedError after %.1f s: %s\n", seconds, e.what());
    std::fflush(stdout);
    return 2;
  }
  return 0;
}
