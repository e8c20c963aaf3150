// The back-end conformance suite (issue: pluggable allocator back ends): the
// same classes and the same operations on every back end, the SOA heap
// included, with identical results. Typed over dynasoar::backend::*; the
// classes are templates of the back end, written as user code would be.
// Runs in both tiers (host threads and kernels).
#include <dynasoar/dynasoar.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "support/backends.h"
#include "support/sanitized.h"
#include "support/stress_rounds.h"

namespace {

using dynasoar::Field;
using dynasoar::platform::atomic_fetch_add;
using ull = unsigned long long;

// Shared counters of Animal::race: kRaceBins sums and a count.
constexpr int kRaceBins = 16;

struct Vec3 {
  float x, y, z;
};

// Three classes of a small hierarchy: an abstract base with two fields, a
// subclass with fields of mixed sizes and alignments, and a subclass of that.
template <class Backend>
struct World {
  class Animal;
  class Fish;
  class Shark;
  using Alloc = typename Backend::template Allocator<Animal, Fish, Shark>;
  using Handle = dynasoar::AllocatorHandle<Alloc>;

  class Animal : public Alloc::Base {
   public:
    declare_abstract_field_types(Animal, int, double)
    Field<Animal, 0> id;
    Field<Animal, 1> energy;

    DYNASOAR_HD void grow(double by) { energy += by; }
    // Objects of every thread of a do-all update shared data, through
    // atomics only: sums in bins[id % kRaceBins], a count in
    // bins[kRaceBins], and a maximum raised by compare-and-swap. The
    // object's own field is written without atomics (no other visit touches it).
    DYNASOAR_HD void race(ull* bins, ull* max) {
      const int i = id;
      atomic_fetch_add(&bins[i % kRaceBins], static_cast<ull>(i) + 1);
      atomic_fetch_add(&bins[kRaceBins], 1ull);
      const ull mine = dynasoar::platform::mix64(static_cast<std::uint64_t>(i));
      ull seen = dynasoar::platform::atomic_load(max);
      while (seen < mine && !dynasoar::platform::atomic_compare_exchange(max, seen, mine)) {
      }
      energy += 1.0;
    }
    DYNASOAR_HD void add_to(ull* sums) {
      atomic_fetch_add(&sums[0], 1ull);
      atomic_fetch_add(&sums[1], static_cast<ull>(static_cast<int>(id)));
      atomic_fetch_add(&sums[2], static_cast<ull>(static_cast<double>(energy)));
    }
  };

  class Fish : public Animal {
   public:
    declare_field_types(Fish, char, Vec3, short[3])
    Field<Fish, 0> tag;
    Field<Fish, 1> pos;
    Field<Fish, 2> fins;

    DYNASOAR_HD explicit Fish(int i) {
      this->id = i;
      this->energy = 2.0 * i;
      tag = static_cast<char>(i % 100);
      pos->x = static_cast<float>(i);
      pos->y = static_cast<float>(i + 1);
      pos->z = static_cast<float>(i + 2);
      for (int k = 0; k < 3; ++k) fins[k] = static_cast<short>(i % 1000 + k);
    }
    // 1 if every field still holds what the constructor wrote for `id` (energy aside).
    DYNASOAR_HD bool intact() const {
      const int i = this->id;
      bool ok = tag == static_cast<char>(i % 100) && pos->x == static_cast<float>(i) &&
                pos->y == static_cast<float>(i + 1) && pos->z == static_cast<float>(i + 2);
      for (int k = 0; k < 3; ++k) ok = ok && fins[k] == static_cast<short>(i % 1000 + k);
      return ok;
    }
    DYNASOAR_HD void check(ull* broken) {
      if (!intact()) atomic_fetch_add(broken, 1ull);
    }
    // Host build: the OS thread that visits this fish, as threads[id] (ids are unique there).
    DYNASOAR_HD void note_thread(ull* threads) {
#if DYNASOAR_DEVICE_CODE
      threads[static_cast<int>(this->id)] = 0;
#else
      threads[static_cast<int>(this->id)] =
          std::hash<std::thread::id>{}(std::this_thread::get_id());
#endif
    }
    // Odd ids are replaced by a new fish with id -1 (not visited by this do-all).
    DYNASOAR_HD void replace_odd(Alloc alloc, ull* visited) {
      atomic_fetch_add(visited, 1ull);
      if (this->id % 2 != 0) {
        new (alloc) Fish(-1);
        dynasoar::destroy(alloc, this);
      }
    }
    DYNASOAR_HD void count_kind(ull* kinds) {
      if (this->template is_a<Shark>())
        atomic_fetch_add(&kinds[1], 1ull);
      else if (this->template cast<Fish>() != nullptr)
        atomic_fetch_add(&kinds[0], 1ull);
    }
  };

  class Shark : public Fish {
   public:
    declare_field_types(Shark, std::uint64_t)
    Field<Shark, 0> teeth;
    DYNASOAR_HD explicit Shark(int i) : Fish(i), teeth(1000 + i) {}

    // Visits every Shark through device_do_staged and adds to out: 0 visits,
    // 1 id sum, 2 visits of itself (by `object`), 3 copies that differ from
    // their object, 4 visits through a copy elsewhere than the object. Odd and even ids call from different branches, so that
    // two groups of one warp may ask for the staging tile at once.
    DYNASOAR_HD void see_all(Alloc alloc, ull* out) {
      ull visits = 0, ids = 0, selves = 0, wrong = 0, staged = 0;
      const auto visit = [&](const Shark* copy, Shark* object) {
        ++visits;
        ids += static_cast<ull>(static_cast<int>(copy->id));
        if (object == this) ++selves;
        if (copy != object) ++staged;
        if (copy->id != object->id || copy->teeth != object->teeth || copy->pos->y != object->pos->y ||
            copy->fins[2] != object->fins[2] || !copy->intact())
          ++wrong;
      };
      if (this->id % 2 != 0)
        alloc.template device_do_staged<Shark>(visit);
      else
        alloc.template device_do_staged<Shark>(visit);
      atomic_fetch_add(&out[0], visits);
      atomic_fetch_add(&out[1], ids);
      atomic_fetch_add(&out[2], selves);
      atomic_fetch_add(&out[3], wrong);
      atomic_fetch_add(&out[4], staged);
    }
    DYNASOAR_HD void destroy_every_third(Alloc alloc) {
      if (this->id % 3 == 0) dynasoar::destroy(alloc, this);
    }
  };
};

// Kernel bodies (trivially copyable functors run by the executor).
template <class W>
struct DeviceDoCount {
  typename W::Alloc alloc;
  ull* sums;
  DYNASOAR_HD void operator()(std::size_t) const {
    alloc.template device_do<typename W::Animal, &W::Animal::add_to>(sums);
  }
};

// Worker w repeatedly creates a fish (id unique to worker and round), checks
// it, and destroys every other one; the survivors stay.
template <class W>
struct Churn {
  typename W::Alloc alloc;
  int rounds;
  ull* counters;  // 0: failed allocations, 1: broken fields
  DYNASOAR_HD void operator()(std::size_t w, std::size_t workers) const {
    for (int r = 0; r < rounds; ++r) {
      const int id = static_cast<int>(static_cast<std::size_t>(r) * workers + w);
      auto* f = new (alloc) typename W::Fish(id);
      if (f == nullptr) {
        atomic_fetch_add(&counters[0], 1ull);
        continue;
      }
      if (!f->intact()) atomic_fetch_add(&counters[1], 1ull);
      if (r % 2 == 0) dynasoar::destroy(alloc, f);
    }
  }
};

template <class Backend>
class BackendConformance : public ::testing::Test {
 protected:
  using Classes = World<Backend>;
  // One size for every test: CUDA's device heap cannot grow once used.
  static constexpr std::uint64_t kHeapBytes = std::uint64_t{64} << 20;

  // count, id sum and energy sum of every Animal, through a parallel_do.
  // Every Fish (and Shark) still holds the values its constructor wrote.
  static void expect_intact(typename Classes::Handle& heap) {
    dynasoar::platform::Buffer<ull> broken(1);
    broken.zero();
    heap.template parallel_do<typename Classes::Fish, &Classes::Fish::check>(broken.data());
    EXPECT_EQ(broken.to_vector()[0], 0u) << "a field value was overwritten";
  }

  static std::vector<ull> sums(typename Classes::Handle& heap) {
    dynasoar::platform::Buffer<ull> s(3);
    s.zero();
    heap.template parallel_do<typename Classes::Animal, &Classes::Animal::add_to>(s.data());
    return s.to_vector();
  }
};

TYPED_TEST_SUITE(BackendConformance, dynasoar::test::AllBackends, dynasoar::test::BackendNames);

// CMake's lists of back ends (which programs a build makes), read from
// dynasoar/backend_list.h, and backend::All (which back ends the code knows)
// name the same back ends in the same order, and CMake's lists by property
// hold the back ends whose code has it.
#define DYNASOAR_TEST_NAMES(x) #x
#define DYNASOAR_TEST_STRING(x) DYNASOAR_TEST_NAMES(x)
template <class Keep>
std::string backends_where(Keep keep) {
  std::string names;
  dynasoar::model::for_each_type(dynasoar::backend::All{}, [&](auto b) {
    using B = typename decltype(b)::type;
    if (keep(b)) names += (names.empty() ? "" : ":") + std::string(B::kBackend);
  });
  return names;
}
TEST(BackendList, CMakeNamesTheBackEndsOfTheCode) {
  namespace backend = dynasoar::backend;
  EXPECT_EQ(std::string(DYNASOAR_TEST_STRING(DYNASOAR_CMAKE_BACKENDS)), backends_where([](auto) { return true; }));
  EXPECT_EQ(std::string(DYNASOAR_TEST_STRING(DYNASOAR_CMAKE_FREEING_BACKENDS)),
            backends_where([](auto b) { return decltype(b)::type::kFrees; }));
  EXPECT_EQ(std::string(DYNASOAR_TEST_STRING(DYNASOAR_CMAKE_RAW_BACKENDS)),
            backends_where([](auto b) { return backend::RawBackend<typename decltype(b)::type>; }));
  EXPECT_EQ(std::string(DYNASOAR_TEST_STRING(DYNASOAR_CMAKE_KEEPING_RAW_BACKENDS)),
            backends_where([](auto b) { return backend::KeepingRawBackend<typename decltype(b)::type>; }));
  EXPECT_EQ(backend::index_of(DYNASOAR_TEST_STRING(DYNASOAR_BACKEND)), backend::index_of(backend::Selected::kBackend));
  EXPECT_EQ(backend::index_of("no_such_backend"), dynasoar::model::kNotFound);
}

// parallel_new, parallel_do over a base class (both subclasses visited,
// inherited fields addressed in each), device_do, count, is_a/cast.
TYPED_TEST(BackendConformance, NewDoCountOverSubclasses) {
  using W = typename TestFixture::Classes;
  typename W::Handle heap(TestFixture::kHeapBytes);
  constexpr int kFish = 3000, kSharks = 1000;
  heap.template parallel_new<typename W::Fish>(kFish);
  heap.template parallel_new<typename W::Shark>(kSharks);
  EXPECT_EQ(heap.template count<typename W::Fish>(), ull{kFish + kSharks});
  EXPECT_EQ(heap.template count<typename W::Shark>(), ull{kSharks});
  EXPECT_EQ(heap.template count<typename W::Animal>(), ull{kFish + kSharks});

  heap.template parallel_do<typename W::Animal, &W::Animal::grow>(1.0);
  const ull id_sum = ull{kFish} * (kFish - 1) / 2 + ull{kSharks} * (kSharks - 1) / 2;
  const ull energy_sum = 2 * id_sum + kFish + kSharks;
  EXPECT_EQ(TestFixture::sums(heap), (std::vector<ull>{kFish + kSharks, id_sum, energy_sum}));

  dynasoar::platform::Buffer<ull> s(3);
  s.zero();
  dynasoar::platform::parallel_for(1, DeviceDoCount<W>{heap.device(), s.data()});
  EXPECT_EQ(s.to_vector(), (std::vector<ull>{kFish + kSharks, id_sum, energy_sum})) << "device_do";

  dynasoar::platform::Buffer<ull> kinds(2);
  kinds.zero();
  heap.template parallel_do<typename W::Fish, &W::Fish::count_kind>(kinds.data());
  EXPECT_EQ(kinds.to_vector(), (std::vector<ull>{kFish, kSharks})) << "is_a / cast";

  TestFixture::expect_intact(heap);
}

// The _async operations queue on the handle's stream in order: objects made
// by parallel_new_async are there for the parallel_do_async queued after
// it, with one wait at the end; statistics agree with count.
TYPED_TEST(BackendConformance, AsyncOperationsRunInStreamOrder) {
  using W = typename TestFixture::Classes;
  typename W::Handle heap(TestFixture::kHeapBytes);
  constexpr int kFish = 2000, kSharks = 700;
  heap.template parallel_new_async<typename W::Fish>(kFish);
  heap.template parallel_new_async<typename W::Shark>(kSharks);
  heap.template parallel_do_async<typename W::Animal, &W::Animal::grow>(1.0);
  dynasoar::platform::synchronize(heap.stream());
  heap.check_errors();
  const ull id_sum = ull{kFish} * (kFish - 1) / 2 + ull{kSharks} * (kSharks - 1) / 2;
  EXPECT_EQ(TestFixture::sums(heap), (std::vector<ull>{kFish + kSharks, id_sum, 2 * id_sum + kFish + kSharks}));
  ull in_statistics = 0;
  for (const auto& st : heap.template statistics<typename W::Animal>()) in_statistics += st.objects;
  EXPECT_EQ(in_statistics, heap.template count<typename W::Animal>());
  EXPECT_EQ(in_statistics, ull{kFish + kSharks});
  TestFixture::expect_intact(heap);
}

// Handles move: the objects stay, a device() handle taken before the move
// still reaches them, and a move assignment frees what the target held.
TYPED_TEST(BackendConformance, HandlesMoveWithTheirObjects) {
  using W = typename TestFixture::Classes;
  static_assert(std::is_nothrow_move_constructible_v<typename W::Handle>);
  static_assert(!std::is_copy_constructible_v<typename W::Handle>);
  typename W::Handle first(TestFixture::kHeapBytes);
  first.template parallel_new<typename W::Fish>(500);
  const auto before = first.device();
  typename W::Handle second(std::move(first));
  EXPECT_EQ(second.template count<typename W::Fish>(), 500u);
  dynasoar::platform::Buffer<ull> s(3);
  s.zero();
  dynasoar::platform::parallel_for(1, DeviceDoCount<W>{before, s.data()});
  EXPECT_EQ(s.to_vector()[0], 500u) << "a device handle taken before the move";
  second.template parallel_new<typename W::Shark>(100);
  EXPECT_EQ(second.template count<typename W::Animal>(), 600u);

  typename W::Handle third(TestFixture::kHeapBytes);
  third.template parallel_new<typename W::Fish>(7);
  third = std::move(second);
  EXPECT_EQ(third.template count<typename W::Fish>(), 600u);
  EXPECT_EQ(third.template count<typename W::Shark>(), 100u);
  third.template parallel_do<typename W::Animal, &W::Animal::grow>(1.0);
  TestFixture::expect_intact(third);
}

// device_do_staged visits every object once per caller, with copies equal to
// their objects and `object` usable for identity, also over partly filled
// blocks (staged through shared memory on the DynaSOAr heap on the GPU).
TYPED_TEST(BackendConformance, DeviceDoStagedSeesEveryObjectOnce) {
  using W = typename TestFixture::Classes;
  typename W::Handle heap(TestFixture::kHeapBytes);
  constexpr int kSharks = 1500;
  heap.template parallel_new<typename W::Shark>(kSharks);
  heap.template parallel_do<typename W::Shark, &W::Shark::destroy_every_third>(heap.device());
  ull n = 0, id_sum = 0;
  for (int i = 0; i < kSharks; ++i)
    if (i % 3 != 0) ++n, id_sum += static_cast<ull>(i);
  ASSERT_EQ(heap.template count<typename W::Shark>(), n);

  dynasoar::platform::Buffer<ull> out(5);
  out.zero();
  heap.template parallel_do<typename W::Shark, &W::Shark::see_all>(heap.device(), out.data());
  const std::vector<ull> got = out.to_vector();
  EXPECT_EQ(std::vector<ull>(got.begin(), got.begin() + 4), (std::vector<ull>{n * n, n * id_sum, n, 0}))
      << "visits, id sum, self visits, copies unlike their object";
  // Staging happens on the DynaSOAr heap (either layout) on the GPU (do-all warps take a
  // tile each; a group that finds its warp's tile busy, as the odd/even
  // branches here make happen, visits unstaged), nowhere else.
  // This suite is built with DYNASOAR_STAGED_DEVICE_DO=1 (off by default).
  if (dynasoar::platform::kCudaBuild && dynasoar::backend::HeapBackend<TypeParam>)
    EXPECT_GT(got[4], 0u) << "device_do_staged did not stage";
  else
    EXPECT_EQ(got[4], 0u) << "a copy other than the object outside the staged path";
}

// Objects created during a do-all are not visited; an object may destroy itself.
TYPED_TEST(BackendConformance, DoAllSkipsNewObjectsAndAllowsSelfDestruction) {
  using W = typename TestFixture::Classes;
  typename W::Handle heap(TestFixture::kHeapBytes);
  constexpr int kFish = 5000;
  heap.template parallel_new<typename W::Fish>(kFish);
  for (int round = 0; round < 3; ++round) {
    dynasoar::platform::Buffer<ull> visited(1);
    visited.zero();
    heap.template parallel_do<typename W::Fish, &W::Fish::replace_odd>(heap.device(),
                                                                       visited.data());
    EXPECT_EQ(visited.to_vector()[0], ull{kFish}) << "round " << round;
    EXPECT_EQ(heap.template count<typename W::Fish>(), ull{kFish});
  }
  // After the first round the odd ids are gone; the even ones and kFish/2 fish of id -1 remain.
  const ull even = kFish / 2;
  const ull even_sum = even * (even - 1);  // 0 + 2 + ... + 2 (even - 1)
  const std::vector<ull> s = TestFixture::sums(heap);
  EXPECT_EQ(s[0], ull{kFish});
  EXPECT_EQ(s[1], even_sum + static_cast<ull>(-static_cast<long long>(kFish - even)));
  TestFixture::expect_intact(heap);
}

// Many workers create, check and destroy objects at once, for many rounds;
// afterwards exactly the survivors exist and hold their values.
TYPED_TEST(BackendConformance, ConcurrentNewAndDestroy) {
  using W = typename TestFixture::Classes;
  typename W::Handle heap(TestFixture::kHeapBytes);
  const std::size_t workers = dynasoar::platform::kCudaBuild ? 8192 : 16;
  const int rounds = dynasoar::test::stress_rounds(dynasoar::platform::kCudaBuild ? 16 : 400);
  dynasoar::platform::Buffer<ull> counters(2);
  counters.zero();
  dynasoar::platform::parallel_workers(workers, Churn<W>{heap.device(), rounds, counters.data()});
  dynasoar::platform::synchronize();
  heap.check_errors();
  const std::vector<ull> c = counters.to_vector();
  EXPECT_EQ(c[0], 0u) << "allocations failed";
  EXPECT_EQ(c[1], 0u) << "an object's fields were overwritten while it lived";
  const ull survivors = static_cast<ull>(workers) * static_cast<ull>(rounds / 2);
  EXPECT_EQ(heap.template count<typename W::Fish>(), survivors);
  TestFixture::expect_intact(heap);
}

// A heap that is too small: parallel_new throws OutOfMemory, the objects
// that fit exist and are intact, and the heap works afterwards.
TYPED_TEST(BackendConformance, OutOfMemoryIsReportedAndHarmless) {
  using W = typename TestFixture::Classes;
  if (std::string(TypeParam::kName) == "CudaMalloc")
    GTEST_SKIP() << "CudaMalloc: the device heap's size is fixed by the first test, and the host's "
                    "C library "
                    "malloc does not run out";
  if (std::string(TypeParam::kName) == "AWMalloc")
    GTEST_SKIP() << "AWMalloc never runs out: it wraps and hands out memory still in use (paper "
                    "000 Sec. 5.1)";
  // 256 KiB: a few thousand objects; 32 KiB (some hundreds) under the host
  // sanitizers, where a fill to exhaustion of 256 KiB took 22-37 s per
  // circular allocator, and of 64 KiB 11-18 s (CI, ThreadSanitizer).
  constexpr std::uint64_t kBytes = std::uint64_t{dynasoar::test::kSanitized ? 32 : 256} << 10;
  auto check = [](typename W::Handle& heap) {
    EXPECT_THROW(heap.template parallel_new<typename W::Fish>(20000), dynasoar::OutOfMemory);
    const ull made = heap.template count<typename W::Fish>();
    EXPECT_GT(made, 0u);
    EXPECT_LT(made, 20000u);
    TestFixture::expect_intact(heap);
    heap.check_errors();  // the flag was cleared by the throw
    EXPECT_EQ(TestFixture::sums(heap)[0], made);
  };
  if constexpr (!dynasoar::backend::HeapBackend<TypeParam>) {
    // Byte allocators: also without merge on walk and without coalescing (the
    // circular allocators' options; the others ignore them). With merge on
    // walk, CFMMalloc broke objects here until absorbed headers were invalidated.
    for (const int variant : {0, 1, 2}) {
      SCOPED_TRACE(variant == 0 ? "defaults" : variant == 1 ? "merge on free only" : "no coalescing");
      // snippet-begin: byte-options
      dynasoar::HandleOptions options;
      options.pool.merge_on_walk = variant != 1;
      options.pool.coalesce = variant != 2;
      typename W::Handle heap(kBytes, options);
      // snippet-end: byte-options
      check(heap);
    }
  } else {
    typename W::Handle heap(kBytes);
    check(heap);
  }
}

// A host do-all over many objects spreads them over every hardware thread:
// 2^16 fish run their method on min(host_threads(), 2^16 / kHostDoAllGrain)
// distinct OS threads (the split is fixed, one chunk per thread), not on
// one, so that races in user methods can show up on the host and under
// ThreadSanitizer.
TYPED_TEST(BackendConformance, HostDoAllUsesEveryHardwareThread) {
  if constexpr (dynasoar::platform::kCudaBuild)
    GTEST_SKIP() << "host build only: a GPU's threads have no OS thread ids";
  using W = typename TestFixture::Classes;
  namespace platform = dynasoar::platform;
  typename W::Handle heap(TestFixture::kHeapBytes);
  constexpr std::size_t kFish = std::size_t{1} << 16;
  heap.template parallel_new<typename W::Fish>(kFish);
  platform::Buffer<ull> threads(kFish);
  threads.zero();
  heap.template parallel_do<typename W::Fish, &W::Fish::note_thread>(threads.data());
  const std::vector<ull> t = threads.to_vector();
  EXPECT_EQ(std::count(t.begin(), t.end(), 0ull), 0) << "a fish was not visited";
  const std::set<ull> distinct(t.begin(), t.end());
  const std::size_t want =
      std::min<std::size_t>(platform::host_threads(), kFish / platform::kHostDoAllGrain);
  EXPECT_EQ(distinct.size(), want) << "host_threads() = " << platform::host_threads();
  // A handful of objects stays on the calling thread.
  typename W::Handle few(TestFixture::kHeapBytes);
  few.template parallel_new<typename W::Fish>(10);
  platform::Buffer<ull> few_threads(10);
  few_threads.zero();
  few.template parallel_do<typename W::Fish, &W::Fish::note_thread>(few_threads.data());
  const ull caller = std::hash<std::thread::id>{}(std::this_thread::get_id());
  EXPECT_EQ(few_threads.to_vector(), std::vector<ull>(10, caller));
}

// User methods of many objects, visited by many threads at once (every
// hardware thread on the host, the whole grid on the GPU), race on shared
// counters through atomics and on a maximum through compare-and-swap; the
// totals are exact afterwards. Fish and sharks, so both subclasses' do-alls
// run; three rounds.
TYPED_TEST(BackendConformance, DoAllMethodsRaceThroughAtomics) {
  using W = typename TestFixture::Classes;
  typename W::Handle heap(TestFixture::kHeapBytes);
  constexpr int kFish = 40000, kSharks = 25000, kRounds = 3;
  heap.template parallel_new<typename W::Fish>(kFish);
  heap.template parallel_new<typename W::Shark>(kSharks);
  dynasoar::platform::Buffer<ull> bins(kRaceBins + 1), max(1);
  bins.zero();
  max.zero();
  for (int r = 0; r < kRounds; ++r)
    heap.template parallel_do<typename W::Animal, &W::Animal::race>(bins.data(), max.data());

  std::vector<ull> want_bins(kRaceBins + 1, 0);
  ull want_max = 0;
  for (const int n : {kFish, kSharks})
    for (int i = 0; i < n; ++i) {
      want_bins[i % kRaceBins] += kRounds * (static_cast<ull>(i) + 1);
      want_bins[kRaceBins] += kRounds;
      want_max = std::max<ull>(want_max, dynasoar::platform::mix64(static_cast<std::uint64_t>(i)));
    }
  EXPECT_EQ(bins.to_vector(), want_bins);
  EXPECT_EQ(max.to_vector()[0], want_max);
  const ull id_sum = ull{kFish} * (kFish - 1) / 2 + ull{kSharks} * (kSharks - 1) / 2;
  const ull energy_sum = 2 * id_sum + kRounds * ull{kFish + kSharks};
  EXPECT_EQ(TestFixture::sums(heap), (std::vector<ull>{kFish + kSharks, id_sum, energy_sum}))
      << "each object's own field, bumped once a round";
  TestFixture::expect_intact(heap);
}

}  // namespace
