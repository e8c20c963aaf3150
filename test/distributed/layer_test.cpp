// The distributed layer (include/dynasoar/distributed/) on 1 to 4 ranks: the
// transport and communicator (messages, reductions, gathers, barriers, and
// how failures end every rank's wait), migrate under contention (thousands
// of walkers moving in every direction at once, with the invariants a move
// must keep), the pointer check, and table halos over stripes of a grid (a
// stencil gives the same result on any number of ranks).
//
// In the host build the ranks are threads over HostWorld and every test
// runs (CI runs this program under ThreadSanitizer too). A CUDA build needs
// a GPU per rank: there, tests of more ranks than GPUs are skipped.
#include <dynasoar/distributed/halo.h>
#include <dynasoar/distributed/migrate.h>
#include <dynasoar/distributed/run.h>
#include <dynasoar/dynasoar.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#define DIST_TEST_ALLOCATOR dynasoar::SoaAllocator
#define DIST_TEST_NAMESPACE soa_dist
#include "distributed/layer_model.h"
#undef DIST_TEST_ALLOCATOR
#undef DIST_TEST_NAMESPACE
#define DIST_TEST_ALLOCATOR dynasoar::BitmapAllocator
#define DIST_TEST_NAMESPACE aos_dist
#include "distributed/layer_model.h"
#undef DIST_TEST_ALLOCATOR
#undef DIST_TEST_NAMESPACE

namespace {

namespace dist = dynasoar::distributed;
using dist::Communicator;
using dist::DistributedError;
using dist::ElementType;
using dist::Message;
using dist::ReduceOp;
using dynasoar::platform::Buffer;
using ull = unsigned long long;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// GPUs of this machine (CUDA build); 0 in a host build.
int gpu_count() {
#if DYNASOAR_CUDA
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
#else
  return 0;
#endif
}

/// Whether `ranks` ranks can run here: always on host threads; one GPU per
/// rank in a CUDA build (ranks talk over NCCL, one GPU each).
bool can_run(int ranks) {
  return !dynasoar::platform::kCudaBuild || ranks <= 1 || gpu_count() >= ranks;
}

#define SKIP_UNLESS_RANKS(n)                                                                     \
  do {                                                                                           \
    if (!can_run(n))                                                                             \
      GTEST_SKIP() << (n) << " ranks need " << (n) << " GPUs in a CUDA build; this machine has " \
                   << gpu_count();                                                               \
  } while (0)

/// The rank counts of `counts` this machine can run; says which it leaves out.
std::vector<int> runnable(std::initializer_list<int> counts) {
  std::vector<int> out;
  for (int n : counts) {
    if (can_run(n))
      out.push_back(n);
    else
      std::printf("[ SKIPPED  ] %d ranks: a CUDA build needs a GPU per rank; this machine has %d\n",
                  n, gpu_count());
  }
  return out;
}

/// `var` = the rank counts runnable() leaves; skips the test if none is left.
#define RUNNABLE_COUNTS(var, ...)                       \
  const std::vector<int> var = runnable({__VA_ARGS__}); \
  if (var.empty())                                      \
  GTEST_SKIP() << "a CUDA build needs a GPU per rank; this machine has " << gpu_count()

/// Sets (or, with nullptr, removes) an environment variable until the end
/// of the scope. Only while no rank runs: the ranks read the environment.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_.c_str(), old_->c_str(), 1);
    else
      unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

/// The transport run_ranks gives in this build ("host threads", "NCCL").
std::string transport_name() {
  std::string name;
  dist::run_ranks(1, [&](Communicator& comm) { name = comm.transport().name(); });
  return name;
}

/// Host values into a new buffer of the back end's memory.
template <class T>
Buffer<T> buffer_of(const std::vector<T>& v) {
  Buffer<T> b(std::max<std::size_t>(v.size(), 1));
  b.copy_from_host(v.data(), v.size());
  return b;
}

// ---------------------------------------------------------------------------
// Transport and communicator, on 1, 2, 3 and 4 ranks.

class DistributedTransport : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { SKIP_UNLESS_RANKS(GetParam()); }
};

INSTANTIATE_TEST_SUITE_P(Ranks, DistributedTransport, ::testing::Values(1, 2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return "ranks" + std::to_string(p.param);
                         });

// Message k from rank a to rank b: words(a, b, k) 64-bit words, word i = word(a, b, k, i).
std::size_t words(int a, int b, int k) {
  return k == 1 ? 0 : static_cast<std::size_t>(1 + (a * 7 + b * 3 + k) % 5) * 3;
}
std::uint64_t word(int a, int b, int k, std::size_t i) {
  return dynasoar::platform::mix64((static_cast<std::uint64_t>(a) << 48) ^
                                   (static_cast<std::uint64_t>(b) << 32) ^
                                   (static_cast<std::uint64_t>(k) << 16) ^ i);
}

// Several messages to each peer in one exchange (one of 0 bytes) arrive in
// the order they were sent to that peer, whatever order the lists interleave
// peers in; then an exchange of only empty messages, and one in a ring.
TEST_P(DistributedTransport, ExchangeKeepsEachPeersOrder) {
  constexpr int kPerPeer = 4;
  std::vector<int> wrong(static_cast<std::size_t>(GetParam()), -1);
  dist::run_ranks(GetParam(), [&](Communicator& comm) {
    const int me = comm.rank(), n = comm.size();
    std::vector<Buffer<std::uint64_t>> out, in;
    std::vector<Message> sends, receives;
    // Sends listed message by message over the peers, receives peer by peer.
    for (int k = 0; k < kPerPeer; ++k)
      for (int p = 0; p < n; ++p) {
        if (p == me) continue;
        std::vector<std::uint64_t> v(words(me, p, k));
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = word(me, p, k, i);
        out.push_back(buffer_of(v));
        sends.push_back({p, v.empty() ? nullptr : out.back().data(), v.size() * 8});
      }
    for (int p = n - 1; p >= 0; --p) {
      if (p == me) continue;
      for (int k = 0; k < kPerPeer; ++k) {
        in.emplace_back(std::max<std::size_t>(words(p, me, k), 1));
        in.back().zero();
        receives.push_back(
            {p, words(p, me, k) == 0 ? nullptr : in.back().data(), words(p, me, k) * 8});
      }
    }
    comm.exchange(sends, receives);
    int bad = 0, m = 0;
    for (int p = n - 1; p >= 0; --p) {
      if (p == me) continue;
      for (int k = 0; k < kPerPeer; ++k, ++m) {
        const std::vector<std::uint64_t> got = in[static_cast<std::size_t>(m)].to_vector();
        for (std::size_t i = 0; i < words(p, me, k); ++i) bad += got[i] != word(p, me, k, i);
      }
    }
    // Only empty messages: nothing to wait for, nothing left over for the ring below.
    std::vector<Message> empty_sends, empty_receives;
    for (int p = 0; p < n; ++p)
      if (p != me) {
        empty_sends.push_back({p, nullptr, 0});
        empty_receives.push_back({p, nullptr, 0});
      }
    comm.exchange(empty_sends, empty_receives);
    if (n > 1) {
      Buffer<std::uint64_t> to_next =
          buffer_of(std::vector<std::uint64_t>{std::uint64_t(me) * 1000 + 1});
      Buffer<std::uint64_t> from_previous(1);
      comm.exchange({{(me + 1) % n, to_next.data(), 8}},
                    {{(me + n - 1) % n, from_previous.data(), 8}});
      bad += from_previous.to_vector()[0] != std::uint64_t((me + n - 1) % n) * 1000 + 1;
    }
    wrong[static_cast<std::size_t>(me)] = bad;
  });
  for (int r = 0; r < GetParam(); ++r)
    EXPECT_EQ(wrong[static_cast<std::size_t>(r)], 0) << "rank " << r;
}

// Rank r's element i of the all-reduce tests, of each element type: negative
// values for the signed ones, sums that wrap for the unsigned ones, and
// floating-point values whose sums are exact (so any order gives the bits).
template <class T>
T element(int r, std::size_t i) {
  const auto ri = static_cast<std::int64_t>(r), ii = static_cast<std::int64_t>(i);
  if constexpr (std::is_same_v<T, std::int32_t>)
    return static_cast<T>((ri + 1) * 1000 * (i % 2 ? -1 : 1) + ii * 37 - 5 * ((ri * 3) % 4));
  else if constexpr (std::is_same_v<T, std::uint32_t>)
    return i == 0 ? 0xFFFFFFF0u + static_cast<T>(r) * 5
                  : static_cast<T>(r * 977 + ii * 13 + (ri % 2) * 100000);
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return (ri + 1) * (std::int64_t{1} << 40) * (i % 2 ? -1 : 1) + ii - ((ri * 5) % 3);
  else if constexpr (std::is_same_v<T, std::uint64_t>)
    return i == 0 ? ~std::uint64_t{0} - static_cast<T>(r) * 3
                  : (static_cast<T>(r) << 33) + static_cast<T>(ii);
  else
    return static_cast<T>((static_cast<double>((ri * 7) % 5) - 1.5) * 0.25 *
                          static_cast<double>(ii + 1));
}

template <class T>
std::vector<T> reduced(int ranks, std::size_t count, ReduceOp op) {
  std::vector<T> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    T a = element<T>(0, i);
    for (int r = 1; r < ranks; ++r) {
      const T b = element<T>(r, i);
      a = op == ReduceOp::kSum   ? static_cast<T>(a + b)
          : op == ReduceOp::kMin ? std::min(a, b)
                                 : std::max(a, b);
    }
    out[i] = a;
  }
  return out;
}

// Every element type and operation, on arrays of the back end's memory and
// on host values; counts the results that differ from the expected ones.
template <class T>
int check_all_reduce(Communicator& comm) {
  constexpr std::size_t kCount = 7;
  static_assert(dist::element_bytes(dist::element_type_of<T>()) == sizeof(T));
  int bad = 0;
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax}) {
    std::vector<T> mine(kCount);
    for (std::size_t i = 0; i < kCount; ++i) mine[i] = element<T>(comm.rank(), i);
    Buffer<T> data = buffer_of(mine);
    comm.all_reduce(data.data(), kCount, op);
    const std::vector<T> want = reduced<T>(comm.size(), kCount, op);
    const std::vector<T> got = data.to_vector();
    for (std::size_t i = 0; i < kCount; ++i) bad += std::memcmp(&got[i], &want[i], sizeof(T)) != 0;
    const T one = comm.all_reduce(element<T>(comm.rank(), 3), op);
    bad += std::memcmp(&one, &want[3], sizeof(T)) != 0;
  }
  return bad;
}

TEST_P(DistributedTransport, AllReduceEveryTypeAndOperation) {
  std::vector<int> wrong(static_cast<std::size_t>(GetParam()), -1);
  dist::run_ranks(GetParam(), [&](Communicator& comm) {
    wrong[static_cast<std::size_t>(comm.rank())] =
        check_all_reduce<std::int32_t>(comm) + check_all_reduce<std::uint32_t>(comm) +
        check_all_reduce<std::int64_t>(comm) + check_all_reduce<std::uint64_t>(comm) +
        check_all_reduce<float>(comm) + check_all_reduce<double>(comm);
  });
  for (int r = 0; r < GetParam(); ++r)
    EXPECT_EQ(wrong[static_cast<std::size_t>(r)], 0) << "rank " << r;
}

// A sum of doubles whose result depends on the order of the additions is
// the same bits on every rank; host threads add in rank order.
TEST_P(DistributedTransport, AllReduceOfDoublesGivesEveryRankTheSameBits) {
  constexpr std::size_t kCount = 16;
  const int n = GetParam();
  auto value = [](int r, std::size_t i) {
    return 0.1 * (r + 1) + 1e-3 / static_cast<double>(i + 3) +
           (i % 3 == 0 ? 1e16 * (r % 2 ? -1 : 1) : 0.0) + static_cast<double>(i) * 1e-17;
  };
  std::vector<std::vector<std::uint64_t>> bits(static_cast<std::size_t>(n));
  const bool rank_order = transport_name() == "host threads";
  dist::run_ranks(n, [&](Communicator& comm) {
    std::vector<double> mine(kCount);
    for (std::size_t i = 0; i < kCount; ++i) mine[i] = value(comm.rank(), i);
    Buffer<double> data = buffer_of(mine);
    comm.all_reduce(data.data(), kCount);
    const std::vector<double> got = data.to_vector();
    auto& b = bits[static_cast<std::size_t>(comm.rank())];
    b.resize(kCount);
    std::memcpy(b.data(), got.data(), kCount * sizeof(double));
  });
  for (int r = 1; r < n; ++r)
    EXPECT_EQ(bits[static_cast<std::size_t>(r)], bits[0]) << "rank " << r << " against rank 0";
  if (rank_order)
    for (std::size_t i = 0; i < kCount; ++i) {
      double sum = value(0, i);
      for (int r = 1; r < n; ++r) sum += value(r, i);
      std::uint64_t want;
      std::memcpy(&want, &sum, sizeof want);
      EXPECT_EQ(bits[0][i], want) << "element " << i << ": not the sum in rank order";
    }
}

struct RankInfo {
  std::int32_t rank;
  std::int32_t size;
  double half;
  std::uint64_t tag;
};

// all_gather of a host value (a struct) and of arrays in the back end's memory.
TEST_P(DistributedTransport, AllGatherOfValuesAndArrays) {
  constexpr std::size_t kCount = 9;
  std::vector<int> wrong(static_cast<std::size_t>(GetParam()), -1);
  dist::run_ranks(GetParam(), [&](Communicator& comm) {
    const int me = comm.rank(), n = comm.size();
    int bad = 0;
    const std::vector<RankInfo> all = comm.all_gather(
        RankInfo{me, n, me * 0.5, dynasoar::platform::mix64(static_cast<std::uint64_t>(me))});
    bad += all.size() != static_cast<std::size_t>(n);
    for (int r = 0; r < n && r < static_cast<int>(all.size()); ++r) {
      const RankInfo& i = all[static_cast<std::size_t>(r)];
      bad += i.rank != r || i.size != n || i.half != r * 0.5 ||
             i.tag != dynasoar::platform::mix64(static_cast<std::uint64_t>(r));
    }
    std::vector<std::int64_t> mine(kCount);
    for (std::size_t i = 0; i < kCount; ++i)
      mine[i] = me * 1000000 + static_cast<std::int64_t>(i) * 3 - 7;
    Buffer<std::int64_t> send = buffer_of(mine);
    Buffer<std::int64_t> receive(kCount * static_cast<std::size_t>(n));
    receive.zero();
    comm.all_gather(send.data(), receive.data(), kCount);
    const std::vector<std::int64_t> got = receive.to_vector();
    for (int r = 0; r < n; ++r)
      for (std::size_t i = 0; i < kCount; ++i)
        bad += got[static_cast<std::size_t>(r) * kCount + i] !=
               r * 1000000 + static_cast<std::int64_t>(i) * 3 - 7;
    wrong[static_cast<std::size_t>(me)] = bad;
  });
  for (int r = 0; r < GetParam(); ++r)
    EXPECT_EQ(wrong[static_cast<std::size_t>(r)], 0) << "rank " << r;
}

// No rank leaves barrier k before every rank has entered it: after it, all
// n arrivals of round k are counted, and at most those of round k + 1 besides.
TEST_P(DistributedTransport, BarrierWaitsForEveryRank) {
  constexpr int kRounds = 30;
  const int n = GetParam();
  std::atomic<int> arrived{0};
  std::atomic<int> early{0}, late{0};
  dist::run_ranks(n, [&](Communicator& comm) {
    for (int k = 0; k < kRounds; ++k) {
      if ((k + comm.rank()) % 7 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      arrived.fetch_add(1);
      comm.barrier();
      const int seen = arrived.load();
      if (seen < (k + 1) * n) early.fetch_add(1);
      if (seen > (k + 2) * n) late.fetch_add(1);
    }
  });
  EXPECT_EQ(early.load(), 0) << "a rank left a barrier before every rank had entered it";
  EXPECT_EQ(late.load(), 0);
  EXPECT_EQ(arrived.load(), kRounds * n);
}

// A peer out of range, or this rank itself, is refused before anything is
// sent: the communicator goes on working.
TEST_P(DistributedTransport, ExchangeRefusesBadPeers) {
  std::vector<int> refused(static_cast<std::size_t>(GetParam()), 0);
  dist::run_ranks(GetParam(), [&](Communicator& comm) {
    Buffer<std::uint64_t> b(1);
    int& count = refused[static_cast<std::size_t>(comm.rank())];
    for (int bad : {-1, comm.size(), comm.size() + 5, comm.rank()}) {
      try {
        comm.exchange({{bad, b.data(), 8}}, {});
      } catch (const std::invalid_argument& e) {
        count += contains(e.what(), "names peer " + std::to_string(bad));
      }
      try {
        comm.exchange({}, {{bad, b.data(), 8}});
      } catch (const std::invalid_argument&) {
        ++count;
      }
    }
    comm.barrier();
    EXPECT_EQ(comm.all_reduce(1), comm.size());
  });
  for (int r = 0; r < GetParam(); ++r)
    EXPECT_EQ(refused[static_cast<std::size_t>(r)], 8) << "rank " << r;
}

// Sizes that differ between sender and receiver: the receiver throws
// DistributedError naming both sizes, the world is aborted, and every rank's
// next operation throws too.
TEST_P(DistributedTransport, SizeMismatchFailsTheReceiverThenEveryone) {
  const int n = GetParam();
  if (n < 2) GTEST_SKIP() << "needs a peer";
  if (transport_name() != "host threads")
    GTEST_SKIP() << "only host threads see the size of a message";
  std::vector<std::string> in_exchange(static_cast<std::size_t>(n));
  std::vector<int> in_barrier(static_cast<std::size_t>(n), 0);
  dist::run_ranks(n, [&](Communicator& comm) {
    const int me = comm.rank();
    Buffer<std::uint64_t> b(2);
    b.zero();
    try {
      if (me == 0) comm.exchange({{1, b.data(), 16}}, {});
      if (me == 1) comm.exchange({}, {{0, b.data(), 8}});
      if (me > 1) comm.exchange({}, {});
    } catch (const DistributedError& e) {
      in_exchange[static_cast<std::size_t>(me)] = e.what();
    }
    try {
      comm.barrier();
    } catch (const DistributedError&) {
      in_barrier[static_cast<std::size_t>(me)] = 1;
    }
  });
  for (int r = 0; r < n; ++r) {
    if (r == 1)
      EXPECT_TRUE(contains(in_exchange[1], "rank 0 sent 16 bytes where 8 were expected"))
          << in_exchange[1];
    else
      EXPECT_EQ(in_exchange[static_cast<std::size_t>(r)], "")
          << "rank " << r << "'s exchange was complete";
    EXPECT_EQ(in_barrier[static_cast<std::size_t>(r)], 1)
        << "rank " << r << "'s barrier after the abort";
  }
}

struct RankFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A rank whose f throws: run_ranks rethrows that exception (its type and
// message), not the DistributedError it set off on the others, whose
// pending operations end with DistributedError naming the cause. Repeated:
// which rank's error is recorded first is a race the rethrow must not lose.
TEST_P(DistributedTransport, FailingRankIsRethrownAndEndsTheOthersWaits) {
  const int n = GetParam();
  for (int round = 0; round < 8; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::vector<std::string> seen(static_cast<std::size_t>(n));
    try {
      dist::run_ranks(n, [&](Communicator& comm) {
        const int me = comm.rank();
        if (me == n - 1) {
          // The first round lets the others wait first.
          if (round == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
          throw RankFailure("rank " + std::to_string(me) + " gave up");
        }
        try {
          comm.barrier();
        } catch (const DistributedError& e) {
          seen[static_cast<std::size_t>(me)] = e.what();
          throw;
        }
      });
      ADD_FAILURE() << "run_ranks returned";
    } catch (const RankFailure& e) {
      EXPECT_EQ(std::string(e.what()), "rank " + std::to_string(n - 1) + " gave up");
    } catch (const std::exception& e) {
      ADD_FAILURE() << "run_ranks rethrew another exception: " << e.what();
    }
    for (int r = 0; r < n - 1; ++r)
      EXPECT_TRUE(contains(seen[static_cast<std::size_t>(r)], "gave up"))
          << "rank " << r << ": " << seen[static_cast<std::size_t>(r)];
  }
}

// A rank that returns while a peer waits for it: the peer fails at once,
// far below the time limit. Without the transport's record of ended ranks
// (HostWorld::finish) the peers would wait out the whole limit.
TEST_P(DistributedTransport, RankThatReturnsEarlyFailsItsPeersAtOnce) {
  const int n = GetParam();
  if (n < 2) GTEST_SKIP() << "needs a peer";
  constexpr double kLimit = 20.0;
  ScopedEnv timeout("DYNASOAR_DISTRIBUTED_TIMEOUT", "20");
  std::vector<double> waited(static_cast<std::size_t>(n), -1.0);
  try {
    dist::run_ranks(n, [&](Communicator& comm) {
      if (comm.rank() == n - 1) return;
      const Clock::time_point t0 = Clock::now();
      try {
        comm.barrier();
      } catch (const DistributedError&) {
        waited[static_cast<std::size_t>(comm.rank())] = seconds_since(t0);
        throw;
      }
    });
    ADD_FAILURE() << "run_ranks returned";
  } catch (const DistributedError& e) {
    EXPECT_TRUE(contains(e.what(), "rank " + std::to_string(n - 1) + " ended its run")) << e.what();
  }
  for (int r = 0; r < n - 1; ++r) {
    EXPECT_GE(waited[static_cast<std::size_t>(r)], 0.0) << "rank " << r << " did not fail";
    EXPECT_LT(waited[static_cast<std::size_t>(r)], kLimit / 4) << "rank " << r;
  }
}

// A rank stuck longer than DYNASOAR_DISTRIBUTED_TIMEOUT: the rank waiting
// for it throws DistributedError at the limit (plus scheduling), the others
// as soon as that aborts the world, and the stuck rank's next operation
// throws too. Without the deadline every rank would wait for ever.
TEST_P(DistributedTransport, StuckRankFailsTheWaitingRanksAtTheTimeLimit) {
  const int n = GetParam();
  if (n < 2) GTEST_SKIP() << "needs a peer";
  constexpr double kLimit = 0.5, kMargin = 2.0;
  ScopedEnv timeout("DYNASOAR_DISTRIBUTED_TIMEOUT", "0.5");
  std::vector<double> waited(static_cast<std::size_t>(n), -1.0);
  std::vector<std::string> what(static_cast<std::size_t>(n));
  std::mutex m;
  std::condition_variable cv;
  int failed = 0;
  dist::run_ranks(n, [&](Communicator& comm) {
    const int me = comm.rank();
    if (me == n - 1) {
      // Stuck until every other rank has given up on it (at most 10 s).
      std::unique_lock<std::mutex> lock(m);
      cv.wait_for(lock, std::chrono::seconds(10), [&] { return failed == n - 1; });
    }
    const Clock::time_point t0 = Clock::now();
    try {
      comm.barrier();
    } catch (const DistributedError& e) {
      waited[static_cast<std::size_t>(me)] = seconds_since(t0);
      what[static_cast<std::size_t>(me)] = e.what();
    }
    if (me != n - 1) {
      std::lock_guard<std::mutex> lock(m);
      ++failed;
      cv.notify_all();
    }
  });
  double longest = 0;
  int at_limit = 0;
  for (int r = 0; r < n; ++r) {
    const double w = waited[static_cast<std::size_t>(r)];
    EXPECT_GE(w, 0.0) << "rank " << r << " did not fail";
    EXPECT_LT(w, kLimit + kMargin) << "rank " << r;
    if (r == n - 1) {
      EXPECT_TRUE(contains(what[static_cast<std::size_t>(r)], "aborted"))
          << what[static_cast<std::size_t>(r)];
      continue;
    }
    longest = std::max(longest, w);
    if (contains(what[static_cast<std::size_t>(r)], "DYNASOAR_DISTRIBUTED_TIMEOUT")) {
      ++at_limit;
      EXPECT_GE(w, kLimit * 0.99) << "rank " << r << " timed out before the limit";
    }
  }
  EXPECT_GE(at_limit, 1) << "no rank reported the time limit";
  std::printf(
      "[          ] %d ranks, limit %.1f s: the waiting ranks failed after at most %.3f s\n", n,
      kLimit, longest);
}

TEST(DistributedTransportInput, RefusesBadRankCountsAndTimeLimits) {
  int calls = 0;
  EXPECT_THROW(dist::run_ranks(0, [&](Communicator&) { ++calls; }), std::invalid_argument);
  EXPECT_THROW(dist::run_ranks(-2, [&](Communicator&) { ++calls; }), std::invalid_argument);
  EXPECT_THROW(dist::HostWorld(0), std::invalid_argument);
  dist::HostWorld world(2, 1.0);
  EXPECT_THROW(dist::HostTransport(world, 2), std::invalid_argument);
  EXPECT_THROW(dist::HostTransport(world, -1), std::invalid_argument);
  {
    ScopedEnv unset("DYNASOAR_DISTRIBUTED_TIMEOUT", nullptr);
    EXPECT_EQ(dist::default_timeout_seconds(), 120.0);
  }
  {
    ScopedEnv empty("DYNASOAR_DISTRIBUTED_TIMEOUT", "");
    EXPECT_EQ(dist::default_timeout_seconds(), 120.0);
  }
  {
    ScopedEnv quarter("DYNASOAR_DISTRIBUTED_TIMEOUT", "0.25");
    EXPECT_EQ(dist::default_timeout_seconds(), 0.25);
  }
  for (const char* bad : {"0", "-1", "abc", "1.5s", "nan", " "}) {
    SCOPED_TRACE(bad);
    ScopedEnv env("DYNASOAR_DISTRIBUTED_TIMEOUT", bad);
    try {
      dist::default_timeout_seconds();
      ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(contains(e.what(), std::string("DYNASOAR_DISTRIBUTED_TIMEOUT=") + bad))
          << e.what();
    }
    EXPECT_THROW(dist::run_ranks(1, [&](Communicator&) { ++calls; }), std::invalid_argument);
  }
  EXPECT_EQ(calls, 0);
}

// ---------------------------------------------------------------------------
// migrate under contention.

template <class Ns>
struct Model;
struct SoaLayout {};
struct AosLayout {};
#define DIST_TEST_MODEL(TagT, ns) \
  template <>                     \
  struct Model<TagT> {            \
    using Alloc = ns::Alloc;      \
    using Handle = ns::Handle;    \
    using Walker = ns::Walker;    \
    using Runner = ns::Runner;    \
    using Jumper = ns::Jumper;    \
    using Cell = ns::Cell;        \
    using Owner = ns::Owner;      \
    using Check = ns::Check;      \
  };
DIST_TEST_MODEL(SoaLayout, soa_dist)
DIST_TEST_MODEL(AosLayout, aos_dist)
#undef DIST_TEST_MODEL

struct LayoutNames {
  template <class T>
  static std::string GetName(int) {
    return std::is_same_v<T, SoaLayout> ? "Soa" : "Aos";
  }
};
using Layouts = ::testing::Types<SoaLayout, AosLayout>;

constexpr std::uint64_t kHeapBytes = std::uint64_t{8} << 20;

/// The walkers of a run on `ranks` ranks: `pairs` Runners and `pairs`
/// Jumpers, rank r making the pairs [first(r), first(r + 1)).
struct Population {
  std::uint64_t pairs;
  int ranks;
  std::uint64_t first(int r) const {
    return pairs * static_cast<std::uint64_t>(r) / static_cast<std::uint64_t>(ranks);
  }
  std::uint64_t total() const { return 2 * pairs; }
  /// Every walker's tag and home, sorted by tag.
  std::vector<std::pair<std::uint64_t, int>> walkers() const {
    std::vector<std::pair<std::uint64_t, int>> out;
    for (int r = 0; r < ranks; ++r)
      for (std::uint64_t g = 2 * first(r); g < 2 * first(r + 1); ++g)
        out.push_back({soa_dist::tag_of(g), r});
    std::sort(out.begin(), out.end());
    return out;
  }
  /// Makes rank r's walkers on `heap`, each pointing at itself.
  template <class M>
  void make(typename M::Handle& heap, int r) const {
    heap.template parallel_new<typename M::Runner>(first(r + 1) - first(r), first(r), r);
    heap.template parallel_new<typename M::Jumper>(first(r + 1) - first(r), first(r), r);
    heap.template parallel_do<typename M::Walker, &M::Walker::link_self>();
  }
};

/// The owner at `step` of a walker of `tag` made on rank `home`.
int owner_of(std::uint64_t tag, int home, std::uint64_t step, int ranks) {
  return step == 0 ? home : soa_dist::owner_at(tag, step, ranks);
}

/// What every rank checks after a step of migration: its walkers' owners
/// and fields (Walker::verify), and together with the others that the tags
/// of all ranks are the initial ones, each once. Counts what is wrong.
template <class M>
int check_walkers(typename M::Handle& heap, Communicator& comm, std::uint64_t step,
                  const Population& pop, const std::vector<std::uint64_t>& all_tags) {
  const std::size_t cap = static_cast<std::size_t>(pop.total());
  Buffer<std::uint64_t> tags(cap);
  Buffer<ull> counts(3);
  counts.zero();
  heap.template parallel_do<typename M::Walker, &M::Walker::verify>(
      typename M::Check{typename M::Owner{step, comm.size()}, comm.rank(), tags.data(), cap,
                        counts.data(), counts.data() + 1, counts.data() + 2});
  const std::vector<ull> c = counts.to_vector();
  int bad = 0;
  EXPECT_EQ(c[0], heap.template count<typename M::Walker>()) << "rank " << comm.rank();
  EXPECT_EQ(c[1], 0u) << "rank " << comm.rank() << ": walkers on a rank that is not their owner's";
  EXPECT_EQ(c[2], 0u) << "rank " << comm.rank() << ": walkers whose fields changed in the move";
  bad += (c[1] != 0) + (c[2] != 0) + (c[0] > cap);
  // The counts add up, in total and per class.
  EXPECT_EQ(comm.all_reduce(static_cast<std::uint64_t>(c[0])), pop.total());
  EXPECT_EQ(comm.all_reduce(static_cast<std::uint64_t>(heap.template count<typename M::Runner>())),
            pop.pairs);
  EXPECT_EQ(comm.all_reduce(static_cast<std::uint64_t>(heap.template count<typename M::Jumper>())),
            pop.pairs);
  // Every rank's tags on every rank: nothing lost, nothing duplicated.
  const std::vector<ull> per_rank = comm.all_gather(static_cast<ull>(std::min<ull>(c[0], cap)));
  Buffer<std::uint64_t> gathered(cap * static_cast<std::size_t>(comm.size()));
  comm.all_gather(tags.data(), gathered.data(), cap);
  const std::vector<std::uint64_t> g = gathered.to_vector();
  std::vector<std::uint64_t> seen;
  for (int r = 0; r < comm.size(); ++r)
    seen.insert(seen.end(),
                g.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r) * cap),
                g.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r) * cap +
                                                        per_rank[static_cast<std::size_t>(r)]));
  std::sort(seen.begin(), seen.end());
  if (seen != all_tags) {
    std::vector<std::uint64_t> lost, extra;
    std::set_difference(all_tags.begin(), all_tags.end(), seen.begin(), seen.end(),
                        std::back_inserter(lost));
    std::set_difference(seen.begin(), seen.end(), all_tags.begin(), all_tags.end(),
                        std::back_inserter(extra));
    ADD_FAILURE() << "rank " << comm.rank() << ", step " << step << ": " << lost.size()
                  << " walkers lost, " << extra.size() << " duplicated or new";
    ++bad;
  }
  return bad;
}

template <class Layout>
class DistributedMigrate : public ::testing::Test {};
TYPED_TEST_SUITE(DistributedMigrate, Layouts, LayoutNames);

// Walkers of two classes move for several steps to pseudo-random owners on
// 1 to 4 ranks, so that each step moves many objects between every pair of
// ranks at once. After every step: the counts add up, the tags are the
// initial ones (each once), each walker is on its owner and has the fields
// it left with (its pointer arrived null, and Arrive ran once per arrival),
// and each rank's sent and received are the moves its owners ask for.
TYPED_TEST(DistributedMigrate, ManyObjectsInEveryDirection) {
  using M = Model<TypeParam>;
  constexpr int kSteps = 4;
  RUNNABLE_COUNTS(counts, 1, 2, 3, 4);
  for (int n : counts) {
    SCOPED_TRACE(std::to_string(n) + " ranks");
    const Population pop{1500, n};
    const auto walkers = pop.walkers();
    std::vector<std::uint64_t> all_tags;
    for (const auto& w : walkers) all_tags.push_back(w.first);
    ASSERT_EQ(std::adjacent_find(all_tags.begin(), all_tags.end()), all_tags.end())
        << "tags are not distinct";
    // moves[s][from * n + to]: walkers step s moves from `from` to `to`.
    std::vector<std::vector<std::uint64_t>> moves(
        kSteps + 1, std::vector<std::uint64_t>(static_cast<std::size_t>(n * n)));
    for (std::uint64_t s = 1; s <= kSteps; ++s)
      for (const auto& [tag, home] : walkers) {
        const int from = owner_of(tag, home, s - 1, n), to = owner_of(tag, home, s, n);
        if (from != to) ++moves[s][static_cast<std::size_t>(from * n + to)];
      }
    for (std::uint64_t s = 1; s <= kSteps; ++s)
      for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b)
          if (a != b) {
            ASSERT_GT(moves[s][static_cast<std::size_t>(a * n + b)], 50u)
                << "step " << s << ": few moves";
          }
    std::vector<int> wrong(static_cast<std::size_t>(n), -1);
    dist::run_ranks(n, [&](Communicator& comm) {
      const int me = comm.rank();
      typename M::Handle heap(kHeapBytes);
      pop.make<M>(heap, me);
      int bad = check_walkers<M>(heap, comm, 0, pop, all_tags);
      Buffer<ull> arrivals(2);
      for (std::uint64_t s = 1; s <= kSteps; ++s) {
        arrivals.zero();
        const dist::MigrateResult r = dist::migrate<typename M::Walker, &M::Walker::arrived>(
            heap, comm, typename M::Owner{s, n}, arrivals.data(), arrivals.data() + 1);
        std::uint64_t out = 0, in = 0;
        for (int p = 0; p < n; ++p) {
          out += moves[s][static_cast<std::size_t>(me * n + p)];
          in += moves[s][static_cast<std::size_t>(p * n + me)];
        }
        EXPECT_EQ(r.sent, out) << "rank " << me << ", step " << s;
        EXPECT_EQ(r.received, in) << "rank " << me << ", step " << s;
        const std::vector<ull> a = arrivals.to_vector();
        EXPECT_EQ(a[0], r.received) << "Arrive calls, rank " << me << ", step " << s;
        EXPECT_EQ(a[1], 0u) << "walkers whose pointer did not arrive null, rank " << me << ", step "
                            << s;
        EXPECT_EQ(comm.all_reduce(r.sent), comm.all_reduce(r.received));
        bad += (r.sent != out) + (r.received != in) + (a[0] != r.received) + (a[1] != 0);
        bad += check_walkers<M>(heap, comm, s, pop, all_tags);
      }
      wrong[static_cast<std::size_t>(me)] = bad;
    });
    for (int r = 0; r < n; ++r) EXPECT_EQ(wrong[static_cast<std::size_t>(r)], 0) << "rank " << r;
  }
}

// The same moves through a Departures list that a method fills
// (migrate_departures): the same invariants after every step, the list
// emptied by each migration; and a list too small for the leavers throws
// std::length_error on every rank before anything moved.
TYPED_TEST(DistributedMigrate, DepartureListsMoveWhatTheyList) {
  using M = Model<TypeParam>;
  constexpr int kSteps = 3;
  RUNNABLE_COUNTS(counts, 1, 2, 3, 4);
  for (int n : counts) {
    SCOPED_TRACE(std::to_string(n) + " ranks");
    const Population pop{1500, n};
    std::vector<std::uint64_t> all_tags;
    for (const auto& w : pop.walkers()) all_tags.push_back(w.first);
    std::vector<int> wrong(static_cast<std::size_t>(n), -1);
    dist::run_ranks(n, [&](Communicator& comm) {
      const int me = comm.rank();
      typename M::Handle heap(kHeapBytes);
      pop.make<M>(heap, me);
      int bad = 0;
      if (n > 1) {  // too small: every rank has leavers in every class
        dist::Departures<typename M::Walker> tiny(8);
        heap.template parallel_do<typename M::Walker, &M::Walker::list_if_leaving>(
            typename M::Owner{1, n}, me, tiny.device());
        const std::uint64_t before = heap.template count<typename M::Walker>();
        try {
          dist::migrate_departures<typename M::Walker>(heap, comm, tiny);
          ADD_FAILURE() << "rank " << me << ": an overfull list was taken";
          ++bad;
        } catch (const std::length_error& e) {
          bad += !contains(e.what(), "more objects left than the Departures list holds");
        }
        EXPECT_EQ(heap.template count<typename M::Walker>(), before) << "rank " << me << ": objects moved";
        bad += heap.template count<typename M::Walker>() != before;
      }
      dist::Departures<typename M::Walker> leaving(pop.total());
      Buffer<ull> arrivals(2);
      for (std::uint64_t s = 1; s <= kSteps; ++s) {
        arrivals.zero();
        heap.template parallel_do<typename M::Walker, &M::Walker::list_if_leaving>(typename M::Owner{s, n}, me,
                                                                                   leaving.device());
        const dist::MigrateResult r = dist::migrate_departures<typename M::Walker, &M::Walker::arrived>(
            heap, comm, leaving, arrivals.data(), arrivals.data() + 1);
        const std::vector<ull> a = arrivals.to_vector();
        EXPECT_EQ(a[0], r.received) << "Arrive calls, rank " << me << ", step " << s;
        EXPECT_EQ(comm.all_reduce(r.sent), comm.all_reduce(r.received));
        bad += (a[0] != r.received) + (a[1] != 0);
        bad += check_walkers<M>(heap, comm, s, pop, all_tags);
      }
      // The list was emptied: a migration with nothing listed moves nothing.
      const dist::MigrateResult none = dist::migrate_departures<typename M::Walker>(heap, comm, leaving);
      EXPECT_EQ(none.sent + none.received, 0u) << "rank " << me;
      bad += none.sent + none.received != 0;
      wrong[static_cast<std::size_t>(me)] = bad;
    });
    for (int r = 0; r < n; ++r) EXPECT_EQ(wrong[static_cast<std::size_t>(r)], 0) << "rank " << r;
  }
}

namespace dm = soa_dist;
using SoaModel = Model<SoaLayout>;

/// An owner function that names no rank: -1 for Runners, `ranks` for the others.
struct BadOwner {
  int ranks;
  DYNASOAR_HD int operator()(const dm::Walker* w) const {
    return dynasoar::is_a<dm::Runner>(w) ? -1 : ranks;
  }
};

// An owner outside 0..size()-1 on every rank: std::invalid_argument before
// anything moved, and the ranks go on (the next migrate works). On one rank
// only: that rank throws it, run_ranks rethrows it, and the others'
// migrate ends with DistributedError.
TEST(DistributedMigrateErrors, OwnerOutOfRange) {
  RUNNABLE_COUNTS(counts, 1, 2, 3);
  for (int n : counts) {
    SCOPED_TRACE(std::to_string(n) + " ranks");
    const Population pop{300, n};
    std::vector<std::uint64_t> all_tags;
    for (const auto& w : pop.walkers()) all_tags.push_back(w.first);
    std::vector<int> wrong(static_cast<std::size_t>(n), -1);
    dist::run_ranks(n, [&](Communicator& comm) {
      const int me = comm.rank();
      dm::Handle heap(kHeapBytes);
      pop.make<SoaModel>(heap, me);
      const std::uint64_t before = heap.count<dm::Walker>();
      int bad = 0;
      try {
        dist::migrate<dm::Walker>(heap, comm, BadOwner{n});
        ++bad;
      } catch (const std::invalid_argument& e) {
        bad += !contains(e.what(), "outside 0.." + std::to_string(n - 1));
      }
      bad += heap.count<dm::Walker>() != before;
      bad += check_walkers<SoaModel>(heap, comm, 0, pop, all_tags);
      Buffer<ull> arrivals(2);
      arrivals.zero();
      const dist::MigrateResult r = dist::migrate<dm::Walker, &dm::Walker::arrived>(
          heap, comm, dm::Owner{1, n}, arrivals.data(), arrivals.data() + 1);
      bad += comm.all_reduce(r.sent) != comm.all_reduce(r.received);
      bad += check_walkers<SoaModel>(heap, comm, 1, pop, all_tags);
      wrong[static_cast<std::size_t>(me)] = bad;
    });
    for (int r = 0; r < n; ++r) EXPECT_EQ(wrong[static_cast<std::size_t>(r)], 0) << "rank " << r;
    if (n < 2) continue;
    std::vector<int> aborted(static_cast<std::size_t>(n), 0);
    try {
      dist::run_ranks(n, [&](Communicator& comm) {
        const int me = comm.rank();
        dm::Handle heap(kHeapBytes);
        pop.make<SoaModel>(heap, me);
        try {
          if (me == 0)
            dist::migrate<dm::Walker>(heap, comm, BadOwner{n});
          else
            dist::migrate<dm::Walker>(heap, comm, dm::Owner{1, n});
        } catch (const DistributedError&) {
          aborted[static_cast<std::size_t>(me)] = 1;
          throw;
        }
      });
      ADD_FAILURE() << "run_ranks returned";
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(contains(e.what(), "rank 0: a leaver's destination is outside")) << e.what();
    }
    for (int r = 1; r < n; ++r) EXPECT_EQ(aborted[static_cast<std::size_t>(r)], 1) << "rank " << r;
  }
}

// Arrivals that do not fit the receiving rank's heap: OutOfMemory there at
// the next check_errors, rethrown by run_ranks. The senders' migrate completes (their part was
// sending); their next collective operation throws DistributedError.
TEST(DistributedMigrateErrors, ArrivalsThatDoNotFitAreOutOfMemory) {
  RUNNABLE_COUNTS(counts, 2, 3);
  for (int n : counts) {
    SCOPED_TRACE(std::to_string(n) + " ranks");
    std::vector<int> migrated(static_cast<std::size_t>(n), 0),
        aborted(static_cast<std::size_t>(n), 0);
    try {
      dist::run_ranks(n, [&](Communicator& comm) {
        const int me = comm.rank();
        // Rank 0: room for a block of each class; the others send it all theirs.
        auto heap = me == 0 ? dm::Handle::for_objects<dm::Runner, dm::Jumper>({1, 1})
                            : dm::Handle(kHeapBytes);
        const Population pop{2000, n};
        if (me != 0) pop.make<SoaModel>(heap, me);
        dist::migrate<dm::Walker>(heap, comm, dm::ToZero{});
        heap.check_errors();  // the arrivals' out-of-memory flag
        migrated[static_cast<std::size_t>(me)] = 1;
        try {
          comm.barrier();
        } catch (const DistributedError&) {
          aborted[static_cast<std::size_t>(me)] = 1;
        }
      });
      ADD_FAILURE() << "run_ranks returned";
    } catch (const dynasoar::OutOfMemory&) {
    }
    EXPECT_EQ(migrated[0], 0) << "rank 0's migrate returned";
    for (int r = 1; r < n; ++r) {
      EXPECT_EQ(migrated[static_cast<std::size_t>(r)], 1) << "rank " << r;
      EXPECT_EQ(aborted[static_cast<std::size_t>(r)], 1) << "rank " << r;
    }
  }
}

// Cells point at walkers. A walker that leaves while a cell still points at
// it leaves a pointer that check_pointers reports, naming the holder class;
// cells that let go of the leavers first pass. Only one rank sends at a time,
// to one that sends nothing, so that no arrival takes a freed slot that a
// stale pointer still names (the check cannot tell such a pointer apart).
TEST(DistributedMigrateErrors, CheckPointersFindsPointersToLeavers) {
  RUNNABLE_COUNTS(counts, 2, 3);
  ScopedEnv no_check("DYNASOAR_CHECK_POINTERS", nullptr);
  for (int n : counts) {
    SCOPED_TRACE(std::to_string(n) + " ranks");
    const Population pop{400, n};
    std::vector<std::string> stale(static_cast<std::size_t>(n)), later(static_cast<std::size_t>(n));
    std::vector<ull> linked(static_cast<std::size_t>(n));
    dist::run_ranks(n, [&](Communicator& comm) {
      const int me = comm.rank();
      dm::Handle heap(kHeapBytes);
      pop.make<SoaModel>(heap, me);
      heap.parallel_do<dm::Walker, &dm::Walker::make_cell>(heap.device());
      dist::check_pointers(heap, "before", me);
      // Rank 0's walkers leave for rank 1 while its cells still point at them.
      dist::migrate<dm::Walker>(heap, comm, dm::FromTo{0, 1});
      try {
        dist::check_pointers(heap, "after the move", me);
      } catch (const DistributedError& e) {
        stale[static_cast<std::size_t>(me)] = e.what();
      }
      if (me == 0) heap.parallel_do<dm::Cell, &dm::Cell::forget>();
      // Rank 1's walkers leave for rank 0, and its cells let go of them first.
      heap.parallel_do<dm::Cell, &dm::Cell::let_go>(dm::FromTo{1, 0}, me);
      dist::migrate<dm::Walker>(heap, comm, dm::FromTo{1, 0});
      try {
        dist::check_pointers(heap, "after letting go", me);
      } catch (const DistributedError& e) {
        later[static_cast<std::size_t>(me)] = e.what();
      }
      Buffer<ull> n_linked(1);
      n_linked.zero();
      heap.parallel_do<dm::Cell, &dm::Cell::count_linked>(n_linked.data());
      linked[static_cast<std::size_t>(me)] = n_linked.to_vector()[0];
    });
    for (int r = 0; r < n; ++r) {
      const std::string& s = stale[static_cast<std::size_t>(r)];
      if (r == 0)
        EXPECT_TRUE(contains(s, "rank 0, after the move") &&
                    contains(s, "object pointer(s) in objects of Cell"))
            << s;
      else
        EXPECT_EQ(s, "") << "rank " << r;
      EXPECT_EQ(later[static_cast<std::size_t>(r)], "") << "rank " << r;
      // Rank 0's cells were cleared, rank 1's let go; the others' still point at their walkers.
      EXPECT_EQ(linked[static_cast<std::size_t>(r)],
                r < 2 ? 0u : 2 * (pop.first(r + 1) - pop.first(r)))
          << "rank " << r;
    }
  }
}

// DYNASOAR_CHECK_POINTERS=1: migrate itself ends with the check, on the
// rank whose cells still point at leavers; the others' migrate returns.
TEST(DistributedMigrateErrors, CheckPointersFromTheEnvironment) {
  RUNNABLE_COUNTS(counts, 2, 3);
  ScopedEnv check("DYNASOAR_CHECK_POINTERS", "1");
  for (int n : counts) {
    SCOPED_TRACE(std::to_string(n) + " ranks");
    const Population pop{400, n};
    std::vector<std::string> first(static_cast<std::size_t>(n)),
        second(static_cast<std::size_t>(n));
    dist::run_ranks(n, [&](Communicator& comm) {
      const int me = comm.rank();
      dm::Handle heap(kHeapBytes);
      pop.make<SoaModel>(heap, me);
      heap.parallel_do<dm::Walker, &dm::Walker::make_cell>(heap.device());
      try {
        dist::migrate<dm::Walker>(heap, comm, dm::FromTo{0, 1});
      } catch (const DistributedError& e) {
        first[static_cast<std::size_t>(me)] = e.what();
      }
      if (me == 0) heap.parallel_do<dm::Cell, &dm::Cell::forget>();
      heap.parallel_do<dm::Cell, &dm::Cell::let_go>(dm::FromTo{1, 0}, me);
      try {
        dist::migrate<dm::Walker>(heap, comm, dm::FromTo{1, 0});
      } catch (const DistributedError& e) {
        second[static_cast<std::size_t>(me)] = e.what();
      }
    });
    for (int r = 0; r < n; ++r) {
      const std::string& s = first[static_cast<std::size_t>(r)];
      if (r == 0)
        EXPECT_TRUE(contains(s, "after migrate<Walker>") && contains(s, "objects of Cell")) << s;
      else
        EXPECT_EQ(s, "") << "rank " << r;
      EXPECT_EQ(second[static_cast<std::size_t>(r)], "") << "rank " << r;
    }
  }
}

// ---------------------------------------------------------------------------
// Halos: Stripes, TableHalo, and a stencil on any number of ranks.

// For rows 2..40 and ranks 1..rows/2: each row has exactly one owner (the
// one owner() names), local_row and global_row are inverse on each rank's
// local rows, and what each rank sends to a peer is, row for row and in the
// same order, what that peer receives from it: the ghost rows of its table.
TEST(DistributedStripes, PartitionAndHalosPairUp) {
  constexpr int kWidth = 3;
  for (int rows = 2; rows <= 40; ++rows)
    for (int ranks = 1; ranks <= rows / 2 || ranks == 1; ++ranks) {
      SCOPED_TRACE(std::to_string(rows) + " rows, " + std::to_string(ranks) + " ranks");
      std::vector<dist::Stripes> s;
      for (int r = 0; r < ranks; ++r) s.emplace_back(rows, ranks, r);
      int covered = 0;
      for (int r = 0; r < ranks; ++r) {
        covered += s[static_cast<std::size_t>(r)].band();
        if (ranks > 1) {
          EXPECT_GE(s[static_cast<std::size_t>(r)].band(), 2);
        }
      }
      EXPECT_EQ(covered, rows);
      for (int row = 0; row < rows; ++row) {
        int owners = 0, owner = -1;
        for (int r = 0; r < ranks; ++r)
          if (s[static_cast<std::size_t>(r)].owns(row)) {
            ++owners;
            owner = r;
          }
        ASSERT_EQ(owners, 1) << "row " << row;
        for (int r = 0; r < ranks; ++r)
          EXPECT_EQ(s[static_cast<std::size_t>(r)].owner(row), owner) << "row " << row;
      }
      // rows_of[r]: the global rows of rank r's table, by local row.
      std::vector<std::vector<int>> rows_of(static_cast<std::size_t>(ranks));
      for (int r = 0; r < ranks; ++r) {
        const dist::Stripes& t = s[static_cast<std::size_t>(r)];
        EXPECT_EQ(t.local_rows(), t.band() + (ranks > 1 ? 2 : 0));
        for (int local = 0; local < t.local_rows(); ++local) {
          const int row = t.global_row(local);
          ASSERT_TRUE(row >= 0 && row < rows) << "local row " << local;
          EXPECT_EQ(t.local_row(row), local) << "rank " << r << ", local row " << local;
          EXPECT_EQ(t.owns(row),
                    local >= (ranks > 1 ? 1 : 0) && local < t.band() + (ranks > 1 ? 1 : 0));
          // The index forms of the same, for every cell of the row in a grid 3 wide.
          for (int x = 0; x < 3; ++x) {
            EXPECT_EQ(t.local_index(row * 3 + x, 3), local * 3 + x) << "rank " << r << ", row " << row;
            EXPECT_EQ(t.owns_index(row * 3 + x, 3), t.owns(row));
          }
          rows_of[static_cast<std::size_t>(r)].push_back(row);
        }
        for (int row = t.first(); row < t.last(); ++row)
          EXPECT_EQ(t.global_row(t.local_row(row)), row);
      }
      // The rows a range names, through its rank's table.
      auto expand = [&](int r, const std::vector<dist::HaloRange>& ranges, int peer) {
        std::vector<int> out;
        for (const dist::HaloRange& h : ranges) {
          EXPECT_EQ(h.count, std::uint64_t{kWidth});
          EXPECT_EQ(h.first % kWidth, 0u);
          if (h.peer != peer) continue;
          for (std::uint64_t i = h.first; i < h.first + h.count; i += kWidth)
            out.push_back(
                rows_of[static_cast<std::size_t>(r)][static_cast<std::size_t>(i / kWidth)]);
        }
        return out;
      };
      for (int a = 0; a < ranks; ++a) {
        const auto sends = s[static_cast<std::size_t>(a)].sends(kWidth);
        const auto receives = s[static_cast<std::size_t>(a)].receives(kWidth);
        EXPECT_EQ(receives.size(), ranks > 1 ? 2u : 0u);
        std::vector<int> ghosts;
        for (int peer = 0; peer < ranks; ++peer) {
          EXPECT_EQ(expand(a, sends, peer),
                    expand(peer, s[static_cast<std::size_t>(peer)].receives(kWidth), a))
              << "rank " << a << " to rank " << peer;
          for (int row : expand(a, receives, peer)) {
            EXPECT_EQ(s[static_cast<std::size_t>(a)].owner(row), peer);
            ghosts.push_back(row);
          }
        }
        std::sort(ghosts.begin(), ghosts.end());
        std::vector<int> want;
        if (ranks > 1)
          want = {rows_of[static_cast<std::size_t>(a)].front(),
                  rows_of[static_cast<std::size_t>(a)].back()};
        std::sort(want.begin(), want.end());
        EXPECT_EQ(ghosts, want) << "rank " << a << "'s ghosts are its first and last local rows";
      }
    }
}

TEST(DistributedStripes, RefusesBandsOfFewerThanTwoRows) {
  for (int rows = 2; rows <= 40; ++rows)
    for (int ranks = rows / 2 + 1; ranks <= rows + 1; ++ranks) {
      if (ranks == 1) continue;
      try {
        dist::Stripes(rows, ranks, 0);
        ADD_FAILURE() << rows << " rows on " << ranks << " ranks accepted";
      } catch (const std::invalid_argument& e) {
        EXPECT_TRUE(contains(e.what(), "fewer than 2 rows")) << e.what();
      }
    }
  EXPECT_THROW(dist::Stripes(10, 2, 2), std::invalid_argument);
  EXPECT_THROW(dist::Stripes(10, 2, -1), std::invalid_argument);
  EXPECT_THROW(dist::Stripes(10, 0, 0), std::invalid_argument);
  EXPECT_NO_THROW(dist::Stripes(1, 1, 0));
}

using GridIndex = dynasoar::ObjectIndex<dm::Alloc, dm::GridCell>;

/// A copy of a GridCell's fields, read by a kernel.
struct CellState {
  std::uint64_t value;
  std::int64_t sum;
  std::uint32_t gid, bits;
  std::int32_t max, x;
  std::uint32_t link_is_self, marked;
};

struct Snapshot {
  GridIndex cells;
  CellState* out;
  DYNASOAR_HD void operator()(std::size_t i) const {
    dm::GridCell* c = cells[i];
    out[i] = CellState{c->value,
                       c->sum,
                       c->gid,
                       c->bits,
                       c->max,
                       c->x,
                       static_cast<dm::GridCell*>(c->link) == c ? 1u : 0u,
                       c->marked};
  }
};

std::vector<CellState> snapshot(const dynasoar::ObjectTable<dm::Alloc, dm::GridCell>& table) {
  Buffer<CellState> out(std::max<std::size_t>(table.size(), 1));
  dynasoar::platform::parallel_for(table.size(), Snapshot{table.index(), out.data()});
  std::vector<CellState> v = out.to_vector();
  v.resize(table.size());
  return v;
}

// On a grid of rows x width cells split over the ranks: refresh() makes
// every ghost equal to its owner in every value field and leaves its pointer
// field alone; refresh_fields<&GridCell::x>() copies x only; combine merges
// the ghosts' bits, sums and maxima into their owners exactly, and each
// ghost's with its owner's;
// parallel_do_received visits the ghosts and nothing else.
TEST(DistributedHalo, RefreshCombineAndReceived) {
  constexpr int kRows = 9, kWidth = 6;
  constexpr std::uint64_t K = dm::GridCell::kValue;
  RUNNABLE_COUNTS(counts, 1, 2, 3, 4);
  for (int n : counts) {
    SCOPED_TRACE(std::to_string(n) + " ranks");
    std::vector<int> wrong(static_cast<std::size_t>(n), -1);
    dist::run_ranks(n, [&](Communicator& comm) {
      const int me = comm.rank();
      const dist::Stripes s(kRows, n, me);
      dm::Handle heap(kHeapBytes);
      auto cells = heap.parallel_new_indexed<dm::GridCell>(
          static_cast<std::size_t>(s.local_rows() * kWidth), s, kWidth);
      dist::TableHalo<dm::Handle, dm::GridCell> halo(comm, cells, s.sends(kWidth),
                                                     s.receives(kWidth));
      const std::size_t ghosts = n > 1 ? 2 * kWidth : 0;
      int bad = 0;
      auto check = [&](bool ok, const std::string& what) {
        if (!ok) {
          ++bad;
          ADD_FAILURE() << "rank " << me << ": " << what;
        }
      };
      check(halo.received_objects() == ghosts && halo.sent_objects() == ghosts, "halo sizes");
      heap.parallel_do<dm::GridCell, &dm::GridCell::link_self>();
      heap.parallel_do<dm::GridCell, &dm::GridCell::setup>(s, kWidth);
      halo.refresh();
      for (const CellState& c : snapshot(cells)) {
        const std::string at = "refresh, cell " + std::to_string(c.gid);
        check(c.value == c.gid * K && c.x == static_cast<std::int32_t>(c.gid + 1),
              at + ": value fields");
        check(c.bits == 1u && c.sum == c.gid && c.max == 50, at + ": the other value fields");
        check(c.link_is_self == 1, at + ": the pointer field changed");
      }
      // Ghosts hold this rank's own values again; owners change value and x; only x is refreshed.
      heap.parallel_do<dm::GridCell, &dm::GridCell::setup>(s, kWidth);
      heap.parallel_do<dm::GridCell, &dm::GridCell::bump>(s, kWidth);
      halo.refresh_fields<&dm::GridCell::x>();
      for (const CellState& c : snapshot(cells)) {
        const std::string at = "refresh_fields, cell " + std::to_string(c.gid);
        const bool owned = s.owns(static_cast<int>(c.gid / kWidth));
        check(c.x == static_cast<std::int32_t>(c.gid + 2), at + ": x");
        check(c.value == (owned ? c.gid * K + 3 : 0), at + ": value was copied");
        check(c.bits == (owned ? 1u : 1u << (1 + me)), at + ": bits was copied");
        check(c.link_is_self == 1, at + ": the pointer field changed");
      }
      halo.combine<&dm::GridCell::bits>(dist::HaloCombine::kBitOr);
      halo.combine<&dm::GridCell::sum>(dist::HaloCombine::kSum);
      halo.combine<&dm::GridCell::max>(dist::HaloCombine::kMax);
      for (const CellState& c : snapshot(cells)) {
        const std::string at = "combine, cell " + std::to_string(c.gid);
        const int row = static_cast<int>(c.gid / kWidth);
        if (!s.owns(row)) {
          // A ghost merges its own value with its owner's (the owner's
          // before the combine: each row is a ghost on one rank only).
          const std::int32_t mine = me * 100 + static_cast<std::int32_t>(c.gid % 7);
          check(c.bits == ((1u << (1 + me)) | 1u) &&
                    c.sum == 1000000ll * (me + 1) + static_cast<std::int64_t>(c.gid) &&
                    c.max == std::max<std::int32_t>(mine, 50),
                at + ": a ghost merged " + std::to_string(c.bits) + " " + std::to_string(c.sum) + " " +
                    std::to_string(c.max));
          continue;
        }
        // Every rank that holds this row as a ghost added its own.
        std::uint32_t bits = 1u;
        std::int64_t sum = c.gid;
        std::int32_t max = 50;
        for (int h = 0; h < n; ++h) {
          const dist::Stripes t(kRows, n, h);
          if (h == me || t.local_row(row) < 0) continue;
          bits |= 1u << (1 + h);
          sum += 1000000ll * (h + 1);
          max = std::max(max, h * 100 + static_cast<std::int32_t>(c.gid % 7));
        }
        check(c.bits == bits && c.sum == sum && c.max == max,
              at + ": merged " + std::to_string(c.bits) + " " + std::to_string(c.sum) + " " +
                  std::to_string(c.max));
      }
      Buffer<ull> calls(1);
      calls.zero();
      halo.parallel_do_received<&dm::GridCell::mark>(calls.data());
      check(calls.to_vector()[0] == ghosts, "parallel_do_received calls");
      for (const CellState& c : snapshot(cells))
        check(c.marked == (s.owns(static_cast<int>(c.gid / kWidth)) ? 0u : 1u),
              "parallel_do_received on cell " + std::to_string(c.gid));
      wrong[static_cast<std::size_t>(me)] = bad;
    });
    for (int r = 0; r < n; ++r) EXPECT_EQ(wrong[static_cast<std::size_t>(r)], 0) << "rank " << r;
  }
}

TEST(DistributedHalo, RefusesBadRanges) {
  RUNNABLE_COUNTS(counts, 1, 2);
  for (int n : counts) {
    SCOPED_TRACE(std::to_string(n) + " ranks");
    std::vector<int> refused(static_cast<std::size_t>(n), 0);
    dist::run_ranks(n, [&](Communicator& comm) {
      const int me = comm.rank();
      dm::Handle heap(kHeapBytes);
      const dist::Stripes s(8, n, me);
      auto cells = heap.parallel_new_indexed<dm::GridCell>(
          static_cast<std::size_t>(s.local_rows() * 4), s, 4);
      const std::uint64_t size = cells.size();
      const int other = (me + 1) % n;
      const std::vector<dist::HaloRange> bad = {{other, size - 3, 4},
                                                {other, size + 1, 0},
                                                {other, ~std::uint64_t{0}, 2},
                                                {me, 0, 1},
                                                {n, 0, 1},
                                                {-1, 0, 1}};
      int& count = refused[static_cast<std::size_t>(me)];
      for (const dist::HaloRange& r : bad) {
        try {
          dist::TableHalo<dm::Handle, dm::GridCell>(comm, cells, {r}, {});
        } catch (const std::invalid_argument&) {
          ++count;
        }
        try {
          dist::TableHalo<dm::Handle, dm::GridCell>(comm, cells, {}, {r});
        } catch (const std::invalid_argument&) {
          ++count;
        }
      }
      // An empty range at the end is no error.
      if (n > 1) dist::TableHalo<dm::Handle, dm::GridCell>(comm, cells, {{other, size, 0}}, {});
    });
    // With one rank, `other` is this rank: the first three ranges are refused for their peer.
    for (int r = 0; r < n; ++r) EXPECT_EQ(refused[static_cast<std::size_t>(r)], 12) << "rank " << r;
  }
}

using StencilIndex = dynasoar::ObjectIndex<dm::Alloc, dm::StencilCell>;

struct ReadStencil {
  StencilIndex cells;
  std::uint64_t* out;  // gid, value pairs
  DYNASOAR_HD void operator()(std::size_t i) const {
    out[2 * i] = cells[i]->gid;
    out[2 * i + 1] = cells[i]->value;
  }
};

// 10 steps of an integer blur on a torus of 12 x 10 cells: the same grid
// on 1, 2, 3 and 4 ranks with halos as computed here without the framework,
// and the same checksum on every rank (what the distributed examples rely on).
TEST(DistributedHalo, StencilIsTheSameOnAnyNumberOfRanks) {
  constexpr int kRows = 12, kWidth = 10, kSteps = 10;
  constexpr std::uint64_t kMod = dm::StencilCell::kModulus;
  std::vector<std::uint64_t> want(kRows * kWidth);
  for (int g = 0; g < kRows * kWidth; ++g)
    want[static_cast<std::size_t>(g)] = dm::StencilCell::initial(static_cast<std::uint64_t>(g));
  for (int step = 0; step < kSteps; ++step) {
    std::vector<std::uint64_t> next(want.size());
    auto at = [&](int r, int c) {
      return want[static_cast<std::size_t>(((r + kRows) % kRows) * kWidth + (c + kWidth) % kWidth)];
    };
    for (int r = 0; r < kRows; ++r)
      for (int c = 0; c < kWidth; ++c)
        next[static_cast<std::size_t>(r * kWidth + c)] =
            (4 * at(r, c) + at(r - 1, c) + at(r + 1, c) + at(r, c - 1) + at(r, c + 1) +
             2 * at(r - 1, c + 1)) %
            kMod;
    want = next;
  }
  std::uint64_t want_sum = 0;
  for (std::size_t g = 0; g < want.size(); ++g) want_sum += want[g] * (g + 1);
  RUNNABLE_COUNTS(counts, 1, 2, 3, 4);
  for (int n : counts) {
    SCOPED_TRACE(std::to_string(n) + " ranks");
    std::vector<std::uint64_t> grid(want.size(), ~std::uint64_t{0});
    std::vector<std::uint64_t> sums(static_cast<std::size_t>(n));
    std::mutex grid_mutex;
    int stale_ghosts = 0;
    dist::run_ranks(n, [&](Communicator& comm) {
      const int me = comm.rank();
      const dist::Stripes s(kRows, n, me);
      dm::Handle heap(kHeapBytes);
      auto cells = heap.parallel_new_indexed<dm::StencilCell>(
          static_cast<std::size_t>(s.local_rows() * kWidth), s, kWidth);
      dist::TableHalo<dm::Handle, dm::StencilCell> halo(comm, cells, s.sends(kWidth),
                                                        s.receives(kWidth));
      halo.refresh();
      for (int step = 0; step < kSteps; ++step) {
        heap.parallel_do<dm::StencilCell, &dm::StencilCell::compute>(cells.index(), s, kWidth);
        heap.parallel_do<dm::StencilCell, &dm::StencilCell::commit>(s, kWidth);
        halo.refresh_fields<&dm::StencilCell::value>();
      }
      Buffer<std::uint64_t> out(2 * cells.size());
      dynasoar::platform::parallel_for(cells.size(), ReadStencil{cells.index(), out.data()});
      const std::vector<std::uint64_t> v = out.to_vector();
      std::uint64_t mine = 0;
      for (std::size_t i = 0; i < cells.size(); ++i)
        if (s.owns(static_cast<int>(v[2 * i] / kWidth))) mine += v[2 * i + 1] * (v[2 * i] + 1);
      sums[static_cast<std::size_t>(me)] = comm.all_reduce(mine);
      std::lock_guard<std::mutex> lock(grid_mutex);
      for (std::size_t i = 0; i < cells.size(); ++i) {
        const std::uint64_t g = v[2 * i], value = v[2 * i + 1];
        if (s.owns(static_cast<int>(g / kWidth)))
          grid[g] = value;
        else if (value != want[g])
          ++stale_ghosts;  // the last refresh_fields did not reach this ghost
      }
    });
    EXPECT_EQ(grid, want);
    EXPECT_EQ(stale_ghosts, 0);
    for (int r = 0; r < n; ++r)
      EXPECT_EQ(sums[static_cast<std::size_t>(r)], want_sum) << "checksum on rank " << r;
  }
}

}  // namespace
