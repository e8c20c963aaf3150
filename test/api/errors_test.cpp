// Out of memory and bad input across the public API, on every back end and
// in both tiers; each test backs a row of the table in docs/guide/errors.md:
// a handle with too few bytes, objects larger than the memory there is, `new`
// after the heap ran out, destroy of nullptr, of an object destroyed before
// and of a pointer from another heap, and parallel_new of more objects than
// fit. (A class too large for a block of the DynaSOAr heap is a compile-time
// error: test/compile_fail/class_too_large.cpp, the test compile_fail.class_too_large.)
#include <dynasoar/dynasoar.h>
#include <dynasoar/debug.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "support/backends.h"
#include "support/sanitized.h"

namespace {

using dynasoar::Field;
using dynasoar::platform::atomic_fetch_add;
using dynasoar::platform::Buffer;
using ull = unsigned long long;

namespace backend = dynasoar::backend;

// How the back ends differ here (docs/guide/errors.md says why). The heap:
// DynaSOAr and BitmapAlloc, which differ only in the layout of a block.
template <class B>
constexpr bool kIsHeap = backend::HeapBackend<B>;
// AWMalloc wraps to the start of its pool instead of running out.
template <class B>
constexpr bool kWraps = std::is_same_v<B, backend::AWMalloc>;
// AtomicMalloc never reuses memory, and once a request failed every later one fails.
template <class B>
constexpr bool kNeverReuses = std::is_same_v<B, backend::AtomicMalloc>;
// CudaMalloc in a host build is the C library's malloc, which does not run out.
template <class B>
constexpr bool kHostMalloc =
    std::is_same_v<B, backend::CudaMalloc> && !dynasoar::platform::kCudaBuild;

// CudaMalloc in a CUDA build is CUDA's device heap (at least 8 MiB), and
// filling it to exhaustion with device malloc takes minutes, past the device
// tier's limit: the rows that fill a heap skip it there, and say so.
template <class B>
constexpr bool kSlowToExhaust =
    std::is_same_v<B, backend::CudaMalloc> && dynasoar::platform::kCudaBuild;
constexpr const char* kSlowToExhaustReason =
    "filling CUDA's device heap to exhaustion with device malloc takes minutes";


template <class Backend>
struct Pond {
  class Fish;
  class Whale;
  using Alloc = typename Backend::template Allocator<Fish, Whale>;
  using Handle = dynasoar::AllocatorHandle<Alloc>;

  class Fish : public Alloc::Base {
   public:
    declare_field_types(Fish, int, int)
    Field<Fish, 0> id;
    Field<Fish, 1> tag;  // a function of id: an object overwritten by another one shows

    DYNASOAR_HD explicit Fish(int i) : id(i), tag(7 * i + 3) {}
    DYNASOAR_HD void count_broken(ull* broken) {
      if (tag != 7 * id + 3) atomic_fetch_add(broken, 1ull);
    }
    DYNASOAR_HD void destroy_self(Alloc alloc) { dynasoar::destroy(alloc, this); }
    DYNASOAR_HD void destroy_self_twice(Alloc alloc) {
      dynasoar::destroy(alloc, this);
      dynasoar::destroy(alloc, this);
    }
  };

  // Eight times a Fish: a block of the DynaSOAr heap holds 8 of them.
  class Whale : public Alloc::Base {
   public:
    declare_field_types(Whale, int, double[7])
    Field<Whale, 0> id;
    Field<Whale, 1> blubber;

    DYNASOAR_HD explicit Whale(int i) : id(i) {
      for (int k = 0; k < 7; ++k) blubber[k] = static_cast<double>(i + k);
    }
    DYNASOAR_HD void count_broken(ull* broken) {
      const int i = id;
      for (int k = 0; k < 7; ++k)
        if (blubber[k] != static_cast<double>(i + k)) {
          atomic_fetch_add(broken, 1ull);
          return;
        }
    }
    DYNASOAR_HD void destroy_self(Alloc alloc) { dynasoar::destroy(alloc, this); }
  };
};

// One class of 256 KiB: a block of the DynaSOAr heap (64 of them) takes 16 MiB.
template <class Backend>
struct Deep {
  class Giant;
  using Alloc = typename Backend::template Allocator<Giant>;
  using Handle = dynasoar::AllocatorHandle<Alloc>;
  static constexpr int kBytes = 1 << 18;

  class Giant : public Alloc::Base {
   public:
    declare_field_types(Giant, char[kBytes])
    Field<Giant, 0> bytes;
    DYNASOAR_HD explicit Giant(int i) {
      bytes[0] = static_cast<char>(i);
      bytes[kBytes - 1] = static_cast<char>(i);
    }
  };
};

// Thread i makes a T(i) with `new` and writes it (or nullptr) to out[i].
template <class Alloc, class T>
struct NewEach {
  Alloc alloc;
  T** out;
  DYNASOAR_HD void operator()(std::size_t i) const { out[i] = new (alloc) T(static_cast<int>(i)); }
};

// One thread makes T(0), T(1), ..., T(n - 1) with `new`, one after the other.
template <class Alloc, class T>
struct NewInTurn {
  Alloc alloc;
  T** out;
  std::size_t n;
  DYNASOAR_HD void operator()(std::size_t) const {
    for (std::size_t i = 0; i < n; ++i) out[i] = new (alloc) T(static_cast<int>(i));
  }
};

// Thread i destroys objects[i] (which may be nullptr).
template <class Alloc, class T>
struct DestroyEach {
  Alloc alloc;
  T* const* objects;
  DYNASOAR_HD void operator()(std::size_t i) const { dynasoar::destroy(alloc, objects[i]); }
};

// Raw pools: thread 0 asks for `bytes`, writes the result to out[0], and frees it.
template <class Raw>
struct MallocOnce {
  Raw alloc;
  std::uint64_t bytes;
  void** out;
  DYNASOAR_HD void operator()(std::size_t) const {
    out[0] = alloc.malloc(bytes);
    alloc.free(out[0]);
  }
};

// The message of the E that f() throws; a failure (and "") if it throws none.
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "the expected exception was not thrown";
  return {};
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

template <class Backend>
class ApiErrors : public ::testing::Test {
 protected:
  using W = Pond<Backend>;
  // At most CUDA's default device heap (8 MiB): a CudaMalloc handle never
  // asks to enlarge it, which CUDA refuses once a kernel has allocated.
  static constexpr std::uint64_t kHeapBytes = std::uint64_t{4} << 20;

  // A heap for a few hundred objects: 4 blocks of the DynaSOAr heap (32
  // Whales), a pool of 16 KiB otherwise (CudaMalloc: the device heap, at
  // least 8 MiB, or the C library's).
  static typename W::Handle small_heap() {
    using Handle = typename W::Handle;
    if constexpr (kIsHeap<Backend>)
      return Handle(Handle::kBlockBytes * 4);
    else
      return Handle(std::uint64_t{16} << 10);
  }

  // Twice as many Whales as the heap's bytes could hold, and some.
  static std::size_t more_whales_than_fit(const typename W::Handle& heap) {
    return static_cast<std::size_t>(2 * heap.heap_bytes() / (8 * sizeof(double)) + 64);
  }

  // Thread i of one kernel makes Whale(i); the results, nullptr where `new`
  // failed. AWMalloc: one thread makes them all, since objects that it puts
  // at one address would be written by two threads at once.
  static std::vector<typename W::Whale*> new_whales(typename W::Handle& heap, std::size_t n) {
    using Alloc = typename W::Alloc;
    using Whale = typename W::Whale;
    Buffer<Whale*> out(n);
    if constexpr (kWraps<Backend>)
      dynasoar::platform::parallel_for(1, NewInTurn<Alloc, Whale>{heap.device(), out.data(), n},
                                       heap.stream());
    else
      dynasoar::platform::parallel_for(n, NewEach<Alloc, Whale>{heap.device(), out.data()},
                                       heap.stream());
    return out.to_vector(heap.stream());
  }

  static typename W::Fish* new_fish(typename W::Handle& heap) {
    Buffer<typename W::Fish*> out(1);
    dynasoar::platform::parallel_for(
        1, NewEach<typename W::Alloc, typename W::Fish>{heap.device(), out.data()}, heap.stream());
    return out.to_vector(heap.stream())[0];
  }

  // Runs destroy(objects[i]) through `heap`'s allocator, one thread each.
  template <class T>
  static void destroy_all(typename W::Handle& heap, const std::vector<T*>& objects) {
    Buffer<T*> p(objects.size());
    p.copy_from_host(objects.data(), objects.size(), 0, heap.stream());
    dynasoar::platform::parallel_for(
        objects.size(), DestroyEach<typename W::Alloc, T>{heap.device(), p.data()}, heap.stream());
    dynasoar::platform::synchronize(heap.stream());
  }

  template <class T>
  static ull broken(typename W::Handle& heap) {
    Buffer<ull> n(1);
    n.zero();
    heap.template parallel_do<T, &T::count_broken>(n.data());
    return n.to_vector()[0];
  }

  // Every bitmap and block state of the DynaSOAr heap agrees; the byte
  // allocators have no such check.
  static void expect_consistent(typename W::Handle& heap) {
    if constexpr (kIsHeap<Backend>) {
      EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
    }
  }
};

TYPED_TEST_SUITE(ApiErrors, dynasoar::test::AllBackends, dynasoar::test::BackendNames);

// Row "heap too small": a handle that cannot hold an object of every class is
// refused with std::invalid_argument; the DynaSOAr heap needs one block per
// class, the byte allocators 64 bytes (for_objects<T>(0) still gives a heap).
TYPED_TEST(ApiErrors, HandleWithTooFewBytesIsRefused) {
  using Handle = typename TestFixture::W::Handle;
  for (const std::uint64_t bytes : {std::uint64_t{0}, std::uint64_t{48}}) {
    SCOPED_TRACE(bytes);
    const std::string m = message_of<std::invalid_argument>([&] { Handle heap(bytes); });
    EXPECT_TRUE(
        contains(m, kIsHeap<TypeParam> ? "it needs at least one per class" : "is too small"))
        << m;
  }
  if constexpr (kIsHeap<TypeParam>) {
    const std::uint64_t least = Handle::kBlockBytes * Handle::kConcreteClasses;
    EXPECT_THROW(Handle heap(least - 1), std::invalid_argument);
    Handle heap(least);
    heap.template parallel_new<typename TestFixture::W::Fish>(1);
    heap.template parallel_new<typename TestFixture::W::Whale>(1);
    EXPECT_EQ(heap.template count<typename TestFixture::W::Fish>(), 1u);
    EXPECT_EQ(heap.template count<typename TestFixture::W::Whale>(), 1u);
  }
  auto heap = Handle::template for_objects<typename TestFixture::W::Whale>(0);
  heap.template parallel_new<typename TestFixture::W::Fish>(1);
  heap.template parallel_new<typename TestFixture::W::Whale>(1);
  EXPECT_EQ(heap.template count<typename TestFixture::W::Whale>(), 1u);
}

// Row "object too large": on the DynaSOAr heap a block holds 64 objects of
// the smallest class (a larger class is refused at compile time), so a heap
// smaller than one block of a large class is refused; on a byte allocator a
// request larger than the pool returns nullptr and raises the out-of-memory
// flag, and the pool serves requests that fit afterwards.
TYPED_TEST(ApiErrors, ObjectLargerThanTheMemoryThereIs) {
  using D = Deep<TypeParam>;
  using Giant = typename D::Giant;
  constexpr std::uint64_t kPoolBytes = std::uint64_t{128} << 10;  // half a Giant
  if constexpr (kIsHeap<TypeParam>) {
    const std::string m =
        message_of<std::invalid_argument>([&] { typename D::Handle heap(kPoolBytes); });
    EXPECT_TRUE(contains(m, "has 0 blocks of " + std::to_string(D::Handle::kBlockBytes) + " bytes"))
        << m;
    typename D::Handle heap(D::Handle::kBlockBytes);  // one block: 64 Giants
    EXPECT_THROW(heap.template parallel_new<Giant>(65), dynasoar::OutOfMemory);
    EXPECT_EQ(heap.template count<Giant>(), 64u);
  } else {
    typename D::Handle heap(kPoolBytes);
    if constexpr (std::is_same_v<TypeParam, backend::CudaMalloc>) {
      // The pool is CUDA's device heap (at least 8 MiB) or the C library's.
      heap.template parallel_new<Giant>(1);
      EXPECT_EQ(heap.template count<Giant>(), 1u);
    } else {
      const std::string m =
          message_of<dynasoar::OutOfMemory>([&] { heap.template parallel_new<Giant>(1); });
      EXPECT_TRUE(contains(m, "at least one `new` returned nullptr")) << m;
      EXPECT_EQ(heap.template count<Giant>(), 0u);
      EXPECT_FALSE(heap.out_of_memory());
    }

    // The raw pool API: malloc of more bytes than the pool has.
    using Raw = typename D::Alloc::RawAllocator;
    dynasoar::raw::PoolHandle<Raw> pool(std::uint64_t{64} << 10);
    Buffer<void*> out(1);
    const auto ask = [&](std::uint64_t bytes) {
      dynasoar::platform::parallel_for(1, MallocOnce<Raw>{pool.device(), bytes, out.data()});
      return out.to_vector()[0];
    };
    if constexpr (kHostMalloc<TypeParam>) {
      EXPECT_NE(ask(pool.bytes() + 16), nullptr) << "the C library's malloc does not run out";
      EXPECT_FALSE(pool.out_of_memory());
    } else {
      EXPECT_EQ(ask(pool.bytes() + 16), nullptr);
      EXPECT_TRUE(pool.out_of_memory());
      EXPECT_THROW(pool.check_errors(), dynasoar::OutOfMemory);
      EXPECT_FALSE(pool.out_of_memory()) << "check_errors clears the flag";
      if constexpr (kNeverReuses<TypeParam>) {
        EXPECT_EQ(ask(64), nullptr) << "AtomicMalloc counts a failed request as used (Alg. 1)";
        pool.clear_errors();
      } else {
        EXPECT_NE(ask(64), nullptr) << "a request that fits is served after one that did not";
        EXPECT_NO_THROW(pool.check_errors());
      }
    }
  }
}

// Row "`new` after out of memory": nullptr and a flag that check_errors turns
// into OutOfMemory (and clears); the objects made are intact, and once they
// are destroyed the heap serves `new` again (not AtomicMalloc, which never
// reuses memory). AWMalloc never returns nullptr: it hands out live objects'
// memory again, which the test shows.
TYPED_TEST(ApiErrors, NewAfterOutOfMemory) {
  if constexpr (kSlowToExhaust<TypeParam>) GTEST_SKIP() << kSlowToExhaustReason;
  using Whale = typename TestFixture::W::Whale;
  auto heap = TestFixture::small_heap();
  const std::size_t n = TestFixture::more_whales_than_fit(heap);
  const std::vector<Whale*> made = TestFixture::new_whales(heap, n);
  const auto failed = static_cast<std::size_t>(std::count(made.begin(), made.end(), nullptr));
  if constexpr (kWraps<TypeParam>) {
    EXPECT_EQ(failed, 0u);
    EXPECT_LT(std::set<Whale*>(made.begin(), made.end()).size(), n)
        << "no address was handed out twice";
    EXPECT_FALSE(heap.out_of_memory());
    return;  // live objects share memory: what follows is undefined
  }
  if constexpr (kHostMalloc<TypeParam>) {
    EXPECT_EQ(failed, 0u);
    EXPECT_NO_THROW(heap.check_errors());
  } else {
    EXPECT_GT(failed, 0u);
    EXPECT_LT(failed, n);
    EXPECT_TRUE(heap.out_of_memory());
    const std::string m = message_of<dynasoar::OutOfMemory>([&] { heap.check_errors(); });
    EXPECT_TRUE(contains(m, "at least one `new` returned nullptr")) << m;
    EXPECT_FALSE(heap.out_of_memory()) << "check_errors clears the flag";
    EXPECT_NO_THROW(heap.check_errors());
  }
  const std::size_t live = n - failed;
  EXPECT_EQ(heap.template count<Whale>(), live);
  EXPECT_EQ(TestFixture::template broken<Whale>(heap), 0u)
      << "objects made before the heap ran out were overwritten";
  TestFixture::expect_consistent(heap);

  heap.template parallel_do<Whale, &Whale::destroy_self>(heap.device());
  EXPECT_EQ(heap.template count<Whale>(), 0u);
  // The DynaSOAr heap guarantees room for as many again; a pool may be cut finer now.
  const std::size_t again = kIsHeap<TypeParam> ? live : live / 2;
  const std::vector<Whale*> remade = TestFixture::new_whales(heap, again);
  const auto refused = static_cast<std::size_t>(std::count(remade.begin(), remade.end(), nullptr));
  if constexpr (kNeverReuses<TypeParam>) {
    EXPECT_EQ(refused, again) << "AtomicMalloc reused memory";
    EXPECT_THROW(heap.check_errors(), dynasoar::OutOfMemory);
  } else {
    EXPECT_EQ(refused, 0u);
    EXPECT_NO_THROW(heap.check_errors());
    EXPECT_EQ(TestFixture::template broken<Whale>(heap), 0u);
  }
  EXPECT_EQ(heap.template count<Whale>(), again - refused);
  TestFixture::expect_consistent(heap);
}

// Row "destroy of nullptr": nothing happens, in a kernel and on the host.
TYPED_TEST(ApiErrors, DestroyOfNullptrDoesNothing) {
  using Fish = typename TestFixture::W::Fish;
  typename TestFixture::W::Handle heap(TestFixture::kHeapBytes);
  heap.template parallel_new<Fish>(100);
  TestFixture::destroy_all(heap, std::vector<Fish*>(64, nullptr));
  dynasoar::destroy(heap.device(), static_cast<Fish*>(nullptr));
  EXPECT_FALSE(heap.out_of_memory());
  EXPECT_NO_THROW(heap.check_errors());
  EXPECT_EQ(heap.template count<Fish>(), 100u);
  EXPECT_EQ(TestFixture::template broken<Fish>(heap), 0u);
  TestFixture::expect_consistent(heap);
}

// CUDA's malloc under compute-sanitizer: a second destroy reads freed memory.
template <class B>
bool second_destroy_reads_freed_memory() {
  return std::is_same_v<B, backend::CudaMalloc> && dynasoar::test::under_sanitizer();
}
constexpr const char* kSecondDestroyReadsFreedMemoryReason =
    "the second destroy reads the header of memory that free gave back (the C library's or "
    "CUDA's device heap), which the sanitizers report as a use after free (docs/guide/errors.md)";

// Row "destroy twice": the second destroy frees nothing and raises a flag
// that check_errors (and parallel_do) turn into std::logic_error; the heap
// stays consistent and works on. On the DynaSOAr heap also after the object's
// block was freed or given to another class.
TYPED_TEST(ApiErrors, DestroyTwiceIsReported) {
  if (second_destroy_reads_freed_memory<TypeParam>()) GTEST_SKIP() << kSecondDestroyReadsFreedMemoryReason;
  using Fish = typename TestFixture::W::Fish;
  using Whale = typename TestFixture::W::Whale;
  typename TestFixture::W::Handle heap(TestFixture::kHeapBytes);
  const auto expect_reported = [&] {
    const std::string m = message_of<std::logic_error>([&] { heap.check_errors(); });
    EXPECT_TRUE(contains(m, "destroyed twice") && contains(m, "nothing was freed")) << m;
    EXPECT_NO_THROW(heap.check_errors()) << "check_errors clears the flag";
  };

  // The only object of its block (DynaSOAr heap: the block is freed by the first destroy).
  Fish* once = TestFixture::new_fish(heap);
  ASSERT_NE(once, nullptr);
  // snippet-begin: destroy-twice
  TestFixture::destroy_all(heap, std::vector<Fish*>{once});  // destroy(alloc, once) in a kernel
  TestFixture::destroy_all(heap, std::vector<Fish*>{once});  // again: nothing is freed
  expect_reported();  // check_errors() throws std::logic_error: "... destroyed twice ..."
  // snippet-end: destroy-twice
  EXPECT_EQ(heap.template count<Fish>(), 0u);
  TestFixture::expect_consistent(heap);

  // Every object of a do-all destroys itself twice.
  heap.template parallel_new<Fish>(300);
  EXPECT_THROW((heap.template parallel_do<Fish, &Fish::destroy_self_twice>(heap.device())),
               std::logic_error);
  EXPECT_NO_THROW(heap.check_errors());
  EXPECT_EQ(heap.template count<Fish>(), 0u);
  TestFixture::expect_consistent(heap);

  if constexpr (kIsHeap<TypeParam>) {
    // Two neighbouring threads of one kernel (lanes of one warp on the GPU,
    // whose frees of one block are served together) destroy the same
    // object, for every other object: each is freed once, the second
    // destroy is reported, and the heap stays consistent.
    const std::vector<Whale*> whales = TestFixture::new_whales(heap, 96);
    std::vector<Whale*> twice;
    for (std::size_t i = 0; i < whales.size(); ++i) {
      twice.push_back(whales[i]);
      if (i % 2 == 0) twice.push_back(whales[i]);
    }
    TestFixture::destroy_all(heap, twice);
    expect_reported();
    EXPECT_EQ(heap.template count<Whale>(), 0u);
    TestFixture::expect_consistent(heap);
  }

  if constexpr (kIsHeap<TypeParam>) {
    // The freed block holds Whales now: the stale pointer's class differs.
    Fish* stale = TestFixture::new_fish(heap);
    TestFixture::destroy_all(heap, std::vector<Fish*>{stale});
    const std::size_t whales = heap.num_blocks() * 8;  // every block, the freed one included
    EXPECT_THROW(heap.template parallel_new<Whale>(whales + 1), dynasoar::OutOfMemory);
    TestFixture::destroy_all(heap, std::vector<Fish*>{stale});
    expect_reported();
    EXPECT_EQ(heap.template count<Whale>(), whales);
    EXPECT_EQ(TestFixture::template broken<Whale>(heap), 0u);
    TestFixture::expect_consistent(heap);
    heap.template parallel_do<Whale, &Whale::destroy_self>(heap.device());
  }

  // The heap works on.
  heap.template parallel_new<Fish>(500);
  EXPECT_EQ(heap.template count<Fish>(), 500u);
  EXPECT_EQ(TestFixture::template broken<Fish>(heap), 0u);
  TestFixture::expect_consistent(heap);
}

// A flag raised by a kernel before a blocking parallel_do and not yet
// checked is reported by that parallel_do, also when the do-all visits no
// object (on the DynaSOAr heap the raise also marks the error word's host
// mirror, which the blocking call reads after its wait:
// ErrorFlags::any_raised); the next one reports nothing.
TYPED_TEST(ApiErrors, BlockingDoAllReportsFlagsRaisedBeforeIt) {
  if (second_destroy_reads_freed_memory<TypeParam>()) GTEST_SKIP() << kSecondDestroyReadsFreedMemoryReason;
  using Fish = typename TestFixture::W::Fish;
  using Whale = typename TestFixture::W::Whale;
  typename TestFixture::W::Handle heap(TestFixture::kHeapBytes);
  Buffer<ull> broken(1);
  broken.zero(heap.stream());
  for (const int whales : {0, 100}) {
    if (whales != 0) heap.template parallel_new<Whale>(static_cast<std::size_t>(whales));
    Fish* once = TestFixture::new_fish(heap);
    ASSERT_NE(once, nullptr);
    TestFixture::destroy_all(heap, std::vector<Fish*>{once});
    TestFixture::destroy_all(heap, std::vector<Fish*>{once});  // flagged, not checked
    const std::string m = message_of<std::logic_error>(
        [&] { heap.template parallel_do<Whale, &Whale::count_broken>(broken.data()); });
    EXPECT_TRUE(contains(m, "destroyed twice")) << whales << " whales: " << m;
    EXPECT_NO_THROW((heap.template parallel_do<Whale, &Whale::count_broken>(broken.data())))
        << whales << " whales: the flag was cleared";
  }
  EXPECT_EQ(broken.to_vector()[0], 0u);
  TestFixture::expect_consistent(heap);
}

// Row "destroy of a foreign pointer": an object of another heap, and memory
// that holds no object, given to destroy: nothing is freed in either heap,
// and check_errors throws std::logic_error.
TYPED_TEST(ApiErrors, DestroyOfAForeignPointerIsReported) {
  using Fish = typename TestFixture::W::Fish;
  typename TestFixture::W::Handle here(TestFixture::kHeapBytes), there(TestFixture::kHeapBytes);
  here.template parallel_new<Fish>(10);  // entries that a foreign object's header could name
  Fish* theirs = TestFixture::new_fish(there);
  ASSERT_NE(theirs, nullptr);
  Buffer<ull> no_object(4);
  no_object.zero();
  Fish* const nothing = reinterpret_cast<Fish*>(no_object.data());
  for (Fish* foreign : {theirs, nothing}) {
    SCOPED_TRACE(foreign == theirs ? "another heap's object" : "zeroed memory");
    TestFixture::destroy_all(here, std::vector<Fish*>{foreign});
    const std::string m = message_of<std::logic_error>([&] { here.check_errors(); });
    EXPECT_TRUE(contains(m, "another heap") && contains(m, "nothing was freed")) << m;
    EXPECT_EQ(here.template count<Fish>(), 10u);
    EXPECT_EQ(TestFixture::template broken<Fish>(here), 0u);
    TestFixture::expect_consistent(here);
  }
  EXPECT_NO_THROW(there.check_errors());
  EXPECT_EQ(there.template count<Fish>(), 1u);
  EXPECT_EQ(TestFixture::template broken<Fish>(there), 0u);
  TestFixture::expect_consistent(there);
}

// Row "parallel_new over the limit": OutOfMemory, the objects that fit exist
// and are intact, and the heap works once they are destroyed; more than 2^31
// - 1 objects in one call are refused up front. AWMalloc refuses a call that
// would wrap onto its own objects, and makes nothing.
TYPED_TEST(ApiErrors, ParallelNewOverTheLimit) {
  if constexpr (kSlowToExhaust<TypeParam>) GTEST_SKIP() << kSlowToExhaustReason;
  using Whale = typename TestFixture::W::Whale;
  auto heap = TestFixture::small_heap();
  const std::size_t too_many = std::size_t{std::numeric_limits<int>::max()} + 1;
  const std::string huge =
      message_of<std::invalid_argument>([&] { heap.template parallel_new<Whale>(too_many); });
  EXPECT_TRUE(contains(huge, "at most 2^31 - 1 objects")) << huge;
  EXPECT_EQ(heap.template count<Whale>(), 0u);

  const std::size_t n = TestFixture::more_whales_than_fit(heap);
  if constexpr (kHostMalloc<TypeParam>) {
    heap.template parallel_new<Whale>(n);
    EXPECT_EQ(heap.template count<Whale>(), n);
    return;
  }
  const std::string m =
      message_of<dynasoar::OutOfMemory>([&] { heap.template parallel_new<Whale>(n); });
  EXPECT_FALSE(heap.out_of_memory());
  const std::uint64_t made = heap.template count<Whale>();
  if constexpr (kWraps<TypeParam>) {
    EXPECT_TRUE(contains(m, "AWMalloc would hand out memory of objects this call made")) << m;
    EXPECT_EQ(made, 0u);
    const std::size_t fit =
        heap.heap_bytes() / dynasoar::raw::aligned_size(
                                TestFixture::W::Handle::Allocator::template kObjectBytes<Whale>);
    heap.template parallel_new<Whale>(fit);
    EXPECT_EQ(heap.template count<Whale>(), fit);
    EXPECT_EQ(TestFixture::template broken<Whale>(heap), 0u);
    return;
  }
  EXPECT_TRUE(contains(m, "at least one `new` returned nullptr")) << m;
  EXPECT_GT(made, 0u);
  EXPECT_LT(made, n);
  if constexpr (kIsHeap<TypeParam>) {
    EXPECT_EQ(made, heap.num_blocks() * 8u) << "every slot is used first";
  }
  EXPECT_EQ(TestFixture::template broken<Whale>(heap), 0u);
  TestFixture::expect_consistent(heap);

  heap.template parallel_do<Whale, &Whale::destroy_self>(heap.device());
  const std::size_t again = kIsHeap<TypeParam> ? made : made / 2;
  if constexpr (kNeverReuses<TypeParam>) {
    EXPECT_THROW(heap.template parallel_new<Whale>(again), dynasoar::OutOfMemory)
        << "AtomicMalloc reused memory";
    EXPECT_EQ(heap.template count<Whale>(), 0u);
  } else {
    heap.template parallel_new<Whale>(again);
    EXPECT_EQ(heap.template count<Whale>(), again);
    EXPECT_EQ(TestFixture::template broken<Whale>(heap), 0u);
  }
  TestFixture::expect_consistent(heap);
}

}  // namespace
