// A rank for the launcher's tests (launch_check.cmake): plain C++, no CUDA.
//
//   launch_child print          prints what the launcher gave this rank
//   launch_child fail R CODE    rank R exits with CODE, the others with 0
//   launch_child hang R         rank R waits for ever, the others exit with 5
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "(unset)";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 64;
  const int rank = std::atoi(env("DYNASOAR_RANK").c_str());
  const std::string mode = argv[1];
  if (mode == "print") {
    std::printf("rank=%s ranks=%s rendezvous=%s nvls=%s value=%s\n", env("DYNASOAR_RANK").c_str(),
                env("DYNASOAR_RANKS").c_str(), env("DYNASOAR_RENDEZVOUS").c_str(),
                env("NCCL_NVLS_ENABLE").c_str(), env("DYNASOAR_LAUNCH_TEST_VALUE").c_str());
    return 0;
  }
  if (mode == "fail" && argc == 4) return rank == std::atoi(argv[2]) ? std::atoi(argv[3]) : 0;
  if (mode == "hang" && argc == 3) {
    if (rank != std::atoi(argv[2])) return 5;
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  return 64;
}
