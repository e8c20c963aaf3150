// The watchdog (dynasoar/platform/watchdog.h, HandleOptions::watchdog_seconds)
// on both kinds of handle (the DynaSOAr heap's and a byte allocator's, which
// watch their operations each in their own way; the allocator below makes
// no difference to it): a do-all whose method waits for ever, and a
// parallel_new whose constructor does, stop the program within the limit
// with a message that names the operation and how far it got; operations
// that end are never stopped, also many queued at once. Death tests: each
// runs in a process of its own (GoogleTest's "threadsafe" style, which
// starts the test binary again, so that the child has a CUDA context of
// its own).
#include <dynasoar/dynasoar.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "support/backends.h"

namespace {

using dynasoar::Field;
using ull = unsigned long long;

template <class Backend>
struct Waiting {
  class Waiter;
  using Alloc = typename Backend::template Allocator<Waiter>;
  using Handle = dynasoar::AllocatorHandle<Alloc>;

  // Object 0 waits for a flag that nobody sets.
  class Waiter : public Alloc::Base {
   public:
    declare_field_types(Waiter, int)
    Field<Waiter, 0> id;

    DYNASOAR_HD explicit Waiter(int i) : id(i) {}
    DYNASOAR_HD Waiter(int i, const unsigned* never) : id(i) {
      if (i == 0) wait(never);
    }
    DYNASOAR_HD void wait_for(const unsigned* never) {
      if (id == 0) wait(never);
    }
    DYNASOAR_HD void add(ull* sum) {
      dynasoar::platform::atomic_fetch_add(sum, static_cast<ull>(static_cast<int>(id)));
    }

   private:
    static DYNASOAR_HD void wait(const unsigned* never) {
      while (dynasoar::platform::atomic_load(never) == 0) dynasoar::platform::spin_pause();
    }
  };

  static Handle heap(double seconds) {
    dynasoar::HandleOptions options;
    options.watchdog_seconds = seconds;
    return Handle(std::uint64_t{64} << 20, options);
  }

  // A do-all over 1000 objects whose object 0 waits for ever.
  static void wait_in_a_do_all() {
    auto h = heap(1.0);
    h.template parallel_new<Waiter>(1000);
    dynasoar::platform::Buffer<unsigned> never(1);
    never.zero();
    h.template parallel_do<Waiter, &Waiter::wait_for>(never.data());
  }
  // A parallel_new of 100 objects whose object 0's constructor waits for ever.
  static void wait_in_a_constructor() {
    auto h = heap(0.5);
    dynasoar::platform::Buffer<unsigned> never(1);
    never.zero();
    h.template parallel_new<Waiter>(100, static_cast<const unsigned*>(never.data()));
  }
};

// A do-all over an abstract base runs a kernel per subclass: the message
// names the subclass whose objects were running.
template <class Backend>
struct Subclasses {
  class Base;
  class Leaf;
  using Alloc = typename Backend::template Allocator<Base, Leaf>;
  using Handle = dynasoar::AllocatorHandle<Alloc>;

  class Base : public Alloc::Base {
   public:
    declare_abstract_field_types(Base, int)
    Field<Base, 0> id;
    DYNASOAR_HD void wait_for(const unsigned* never) {
      if (id == 0)
        while (dynasoar::platform::atomic_load(never) == 0) dynasoar::platform::spin_pause();
    }
  };
  class Leaf : public Base {
   public:
    declare_field_types(Leaf, float)
    Field<Leaf, 0> size;
    DYNASOAR_HD explicit Leaf(int i) : size(1.0f) { this->id = i; }
  };

  static void wait_in_a_do_all() {
    dynasoar::HandleOptions options;
    options.watchdog_seconds = 0.5;
    Handle h(std::uint64_t{64} << 20, options);
    h.template parallel_new<Leaf>(100);
    dynasoar::platform::Buffer<unsigned> never(1);
    never.zero();
    h.template parallel_do<Base, &Base::wait_for>(never.data());
  }
};

template <class Backend>
class Watchdog : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};
using Handles = ::testing::Types<dynasoar::backend::Dynasoar, dynasoar::backend::CMalloc>;
TYPED_TEST_SUITE(Watchdog, Handles, dynasoar::test::BackendNames);

// On the GPU every object has a thread of its own here, so all but the
// waiting one finish; the host's single thread stops at the first block.
const char* const kFinished = dynasoar::platform::kCudaBuild ? "999" : "[0-9]+";

TYPED_TEST(Watchdog, StopsADoAllWhoseMethodWaitsForEverAndSaysWhy) {
  using W = Waiting<TypeParam>;
  EXPECT_EXIT(W::wait_in_a_do_all(), ::testing::ExitedWithCode(dynasoar::kWatchdogExitCode),
              std::string("dynasoar watchdog: parallel_do<Waiter, &Waiter::wait_for> has run for "
                          "[12]\\.[0-9] s \\(the limit "
                          "is 1 s\\) and has not finished\\.\n  At least ") +
                  kFinished +
                  " of the 1000 Waiter objects it visits have finished the method.*a method or "
                  "constructor that waits for another object");
}

TYPED_TEST(Watchdog, StopsAParallelNewWhoseConstructorWaitsForEver) {
  using W = Waiting<TypeParam>;
  EXPECT_EXIT(W::wait_in_a_constructor(), ::testing::ExitedWithCode(dynasoar::kWatchdogExitCode),
              "dynasoar watchdog: parallel_new<Waiter>\\(100\\) has run for [01]\\.[0-9] s");
}

TYPED_TEST(Watchdog, NamesTheSubclassWhoseObjectsWereRunning) {
  using S = Subclasses<TypeParam>;
  EXPECT_EXIT(
      S::wait_in_a_do_all(), ::testing::ExitedWithCode(dynasoar::kWatchdogExitCode),
      "dynasoar watchdog: parallel_do<Base, &Base::wait_for> on its subclass Leaf has run for "
      "[01]\\.[0-9] s.*of the 100 Leaf objects it visits");
}

// Operations that end are never stopped: a hundred blocking do-alls, and
// more queued at once than the watchdog keeps apart (it waits for the
// stream then), each well under the limit.
TYPED_TEST(Watchdog, LetsOperationsThatEndRun) {
  using W = Waiting<TypeParam>;
  auto heap = W::heap(0.5);
  heap.template parallel_new<typename W::Waiter>(1000);
  dynasoar::platform::Buffer<ull> sum(1);
  sum.zero();
  for (int i = 0; i < 100; ++i)
    heap.template parallel_do<typename W::Waiter, &W::Waiter::add>(sum.data());
  for (int i = 0; i < 200; ++i)
    heap.template parallel_do_async<typename W::Waiter, &W::Waiter::add>(sum.data());
  dynasoar::platform::synchronize(heap.stream());
  heap.check_errors();
  EXPECT_EQ(sum.to_vector()[0], 300ull * (999 * 1000 / 2));
}

// The limit's default comes from DYNASOAR_WATCHDOG; anything but a positive
// number there leaves it off.
TEST(WatchdogLimit, ComesFromTheEnvironment) {
  const char* before = std::getenv("DYNASOAR_WATCHDOG");
  const std::string saved = before != nullptr ? before : "";
  setenv("DYNASOAR_WATCHDOG", "2.5", 1);
  EXPECT_EQ(dynasoar::HandleOptions().watchdog_seconds, 2.5);
  for (const char* off : {"0", "-1", "soon", ""}) {
    setenv("DYNASOAR_WATCHDOG", off, 1);
    EXPECT_EQ(dynasoar::HandleOptions().watchdog_seconds, 0.0) << "DYNASOAR_WATCHDOG=" << off;
  }
  unsetenv("DYNASOAR_WATCHDOG");
  EXPECT_EQ(dynasoar::HandleOptions().watchdog_seconds, 0.0);
  if (before != nullptr) setenv("DYNASOAR_WATCHDOG", saved.c_str(), 1);
}

}  // namespace
