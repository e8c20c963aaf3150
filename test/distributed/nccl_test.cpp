// The NCCL transport (dynasoar/distributed/nccl_transport.h) on two GPUs:
// its operations give exact results, a rank that fails makes its peer's
// operation throw within the time limit, and ranks started by the launcher
// (nccl_rank_program) meet through the rendezvous file, see NCCL honour
// NCCL_NVLS_ENABLE=0 where the machine sets it, and report a rank that
// stopped. With fewer than two GPUs these tests are skipped, saying why.
#include <dynasoar/distributed/run.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace dd = dynasoar::distributed;
using dynasoar::platform::Buffer;

int gpu_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

#define SKIP_WITHOUT_TWO_GPUS()                                                                 \
  do {                                                                                          \
    const int gpus_ = gpu_count();                                                              \
    if (gpus_ < 2)                                                                              \
      GTEST_SKIP() << "skipped: needs 2 GPUs (NCCL drives one GPU per rank), this machine has " \
                   << gpus_;                                                                    \
  } while (0)

// Sets an environment variable for the life of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (old != nullptr) old_ = old;
    had_ = old != nullptr;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

struct Output {
  int status = -1;  // exit code, or -1 for a signal
  std::string text;
  double seconds = 0;
};

// Runs a shell command, its stderr with its stdout.
Output run(const std::string& command) {
  Output o;
  const auto start = std::chrono::steady_clock::now();
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  std::array<char, 4096> chunk{};
  std::size_t n = 0;
  while ((n = std::fread(chunk.data(), 1, chunk.size(), pipe)) > 0) o.text.append(chunk.data(), n);
  const int status = pclose(pipe);
  o.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return o;
}

// A helper program: beside this test's binary (scripts/build-gpu.sh copies
// them there), else where this build made it.
std::string helper(const char* name, const char* built) {
  std::array<char, 4096> self{};
  const ssize_t n = readlink("/proc/self/exe", self.data(), self.size() - 1);
  if (n > 0) {
    std::string path(self.data(), static_cast<std::size_t>(n));
    path = path.substr(0, path.rfind('/') + 1) + name;
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return built;
}

std::string launch(int ranks, const std::string& mode, const std::string& launcher_options = "") {
  return "'" + helper("dynasoar_launch", DYNASOAR_LAUNCH_PATH) + "' -n " + std::to_string(ranks) +
         " " + launcher_options + " -- '" + helper("nccl_rank_program", DYNASOAR_NCCL_PROGRAM) +
         "' " + mode;
}

// What each rank saw, checked on the test's thread.
struct RankResult {
  int sum32 = 0, min32 = 0, max32 = 0;
  std::uint64_t sum64 = 0;
  float sumf = 0;
  double maxd = 0;
  std::vector<std::int64_t> array;
  std::vector<int> gathered;
  std::vector<std::uint32_t> from_peer_first, from_peer_second;
  bool barrier_passed = false;
  std::string transport;
};

TEST(NcclThreads, CollectivesAndExchangeAreExact) {
  SKIP_WITHOUT_TWO_GPUS();
  constexpr std::size_t kArray = 1000;
  constexpr std::size_t kFirst = 1 << 18, kSecond = 3;  // elements of the two messages
  std::vector<RankResult> results(2);
  dd::run_ranks(2, [&](dd::Communicator& comm) {
    const int r = comm.rank();
    RankResult& out = results[static_cast<std::size_t>(r)];
    out.transport = comm.transport().name();
    out.sum32 = comm.all_reduce(r + 1);
    out.min32 = comm.all_reduce(10 - r, dd::ReduceOp::kMin);
    out.max32 = comm.all_reduce(10 - r, dd::ReduceOp::kMax);
    out.sum64 = comm.all_reduce(std::uint64_t{1} << (40 + r));
    out.sumf = comm.all_reduce(0.5f + static_cast<float>(r));
    out.maxd = comm.all_reduce(-1.25 * r, dd::ReduceOp::kMax);

    // An array in device memory: element i is i * (rank + 1).
    std::vector<std::int64_t> host(kArray);
    for (std::size_t i = 0; i < kArray; ++i) host[i] = static_cast<std::int64_t>(i) * (r + 1);
    Buffer<std::int64_t> array(kArray);
    array.copy_from_host(host.data(), kArray);
    comm.all_reduce(array.data(), kArray);
    out.array = array.to_vector();

    out.gathered = comm.all_gather(100 + r);

    // Two messages to the peer, received in the order they were sent.
    const int peer = 1 - r;
    std::vector<std::uint32_t> first(kFirst), second(kSecond);
    for (std::size_t i = 0; i < kFirst; ++i) first[i] = static_cast<std::uint32_t>(i * 7 + r);
    for (std::size_t i = 0; i < kSecond; ++i) second[i] = static_cast<std::uint32_t>(1000 + r);
    Buffer<std::uint32_t> send_first(kFirst), send_second(kSecond), got_first(kFirst),
        got_second(kSecond);
    send_first.copy_from_host(first.data(), kFirst);
    send_second.copy_from_host(second.data(), kSecond);
    comm.exchange({{peer, send_first.data(), kFirst * 4}, {peer, send_second.data(), kSecond * 4}},
                  {{peer, got_first.data(), kFirst * 4}, {peer, got_second.data(), kSecond * 4}});
    out.from_peer_first = got_first.to_vector();
    out.from_peer_second = got_second.to_vector();

    comm.barrier();
    out.barrier_passed = true;
  });
  for (int r = 0; r < 2; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const RankResult& got = results[static_cast<std::size_t>(r)];
    EXPECT_EQ(got.transport, "NCCL");
    EXPECT_EQ(got.sum32, 3);
    EXPECT_EQ(got.min32, 9);
    EXPECT_EQ(got.max32, 10);
    EXPECT_EQ(got.sum64, (std::uint64_t{1} << 40) + (std::uint64_t{1} << 41));
    EXPECT_EQ(got.sumf, 2.0f);
    EXPECT_EQ(got.maxd, 0.0);
    ASSERT_EQ(got.array.size(), kArray);
    for (std::size_t i = 0; i < kArray; ++i)
      ASSERT_EQ(got.array[i], static_cast<std::int64_t>(i) * 3) << "element " << i;
    EXPECT_EQ(got.gathered, (std::vector<int>{100, 101}));
    const int peer = 1 - r;
    ASSERT_EQ(got.from_peer_first.size(), kFirst);
    for (std::size_t i = 0; i < kFirst; ++i)
      ASSERT_EQ(got.from_peer_first[i], static_cast<std::uint32_t>(i * 7 + peer))
          << "element " << i;
    EXPECT_EQ(got.from_peer_second, std::vector<std::uint32_t>(kSecond, 1000u + peer));
    EXPECT_TRUE(got.barrier_passed);
  }
}

TEST(NcclThreads, FailingRankMakesPeerThrowWithinTimeLimit) {
  SKIP_WITHOUT_TWO_GPUS();
  ScopedEnv timeout("DYNASOAR_DISTRIBUTED_TIMEOUT", "5");
  std::string peer_error;
  double peer_seconds = -1;
  bool peer_returned = false;
  const auto start = std::chrono::steady_clock::now();
  try {
    dd::run_ranks(2, [&](dd::Communicator& comm) {
      if (comm.rank() == 1) throw std::runtime_error("rank 1 stops before the all_reduce");
      const auto begin = std::chrono::steady_clock::now();
      try {
        (void)comm.all_reduce(1);
        peer_returned = true;
      } catch (const dd::DistributedError& e) {
        peer_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
        peer_error = e.what();
        throw;
      }
    });
    FAIL() << "run_ranks returned although rank 1 threw";
  } catch (const dd::DistributedError& e) {
    FAIL() << "run_ranks rethrew rank 0's DistributedError, not the first error: " << e.what();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "rank 1 stops before the all_reduce");
  }
  const double total =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_FALSE(peer_returned);
  EXPECT_GE(peer_seconds, 0.0) << "rank 0's all_reduce did not throw DistributedError";
  EXPECT_LT(peer_seconds, 5.0);
  EXPECT_NE(peer_error.find("rank 0, all_reduce"), std::string::npos) << peer_error;
  EXPECT_NE(peer_error.find("rank 1 stops before the all_reduce"), std::string::npos) << peer_error;
  EXPECT_LT(total, 30.0);
}

TEST(NcclThreads, MoreRanksThanGpusIsRefused) {
  const int gpus = gpu_count();
  try {
    dd::NcclWorld world(gpus + 1);
    FAIL() << "NcclWorld accepted " << gpus + 1 << " ranks on " << gpus << " GPUs";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("this machine has " + std::to_string(gpus)),
              std::string::npos)
        << e.what();
  }
}

TEST(NcclLaunched, RanksMeetThroughTheRendezvousFile) {
  SKIP_WITHOUT_TWO_GPUS();
  const Output o = run(launch(2, "sum"));
  EXPECT_EQ(o.status, 0) << o.text;
  EXPECT_NE(o.text.find("rank 0 of 2: all_reduce sum = 3 (NCCL)"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("rank 1 of 2: all_reduce sum = 3 (NCCL)"), std::string::npos) << o.text;
}

TEST(NcclLaunched, RankThatExitsEarlyIsReported) {
  SKIP_WITHOUT_TWO_GPUS();
  const Output o =
      run("DYNASOAR_DISTRIBUTED_TIMEOUT=10 " + launch(2, "early-exit", "--timeout 30"));
  EXPECT_NE(o.status, 0) << o.text;
  EXPECT_NE(o.text.find("rank 1 exited with code 3"), std::string::npos) << o.text;
  const std::string said = "DistributedError after ";
  const std::size_t at = o.text.find(said);
  ASSERT_NE(at, std::string::npos) << o.text;
  EXPECT_EQ(o.text.compare(o.text.find(" s: ", at), 10, " s: rank 0"), 0) << o.text;
  // Within its time limit, and the start-up.
  EXPECT_LT(std::stod(o.text.substr(at + said.size())), 10.0 + 5.0) << o.text;
  EXPECT_NE(o.text.find("rank 0 exited with code 2"), std::string::npos) << o.text;
  EXPECT_LT(o.seconds, 40.0);
}

TEST(NcclLaunched, NvlinkMulticastSettingIsHonoured) {
  const char* nvls = std::getenv("NCCL_NVLS_ENABLE");
  if (nvls == nullptr || std::string(nvls) != "0")
    GTEST_SKIP() << "skipped: the environment does not set NCCL_NVLS_ENABLE=0 (set on the "
                    "machines with several GPUs; this test checks that NCCL sees it)";
  SKIP_WITHOUT_TWO_GPUS();
  const Output o = run("NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=ENV " + launch(2, "sum"));
  EXPECT_EQ(o.status, 0) << o.text;
  EXPECT_NE(o.text.find("NCCL_NVLS_ENABLE set by environment to 0"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("all_reduce sum = 3"), std::string::npos) << o.text;
}

}  // namespace
