// A tour of the hierarchical bitmap, the structure DynaSOAr uses to find free
// and allocated object slots. Runs on the GPU in a CUDA build and on host
// threads in a host build; the code is the same.
//
// A pool of `slots` free slots (all bits set) is shared by many workers that
// each take slots with try_find_and_clear (the allocator's search, seeded so
// that workers start in different places) and give every third one back with
// set. Afterwards the demo checks what must hold: no slot was handed out
// twice, the bitmap holds exactly the slots not kept, and every level agrees
// with the containers below it.
//
// Usage: bitmap_demo [slots] (1 .. 2^32 - 2, default 1000000; anything else:
// a message and exit code 2)
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include <dynasoar/dynasoar.h>

namespace {

using dynasoar::bit_index;
using dynasoar::Bitmap;

struct TakeSlots {
  Bitmap pool;
  std::uint32_t* owner;  // per slot: how many workers took it and kept it
  int per_worker;
  DYNASOAR_HD void operator()(std::size_t worker, std::size_t) const {
    for (int k = 0; k < per_worker; ++k) {
      // The search may miss while other workers change the levels it walks
      // (paper Sec. 4.1.3); like the allocator, retry with new seeds a few
      // times before taking "no bit" as "pool empty".
      bit_index slot = dynasoar::kNoBit;
      for (std::uint64_t attempt = 0; attempt < 8 && slot == dynasoar::kNoBit; ++attempt)
        slot = pool.try_find_and_clear((worker * 7919 + static_cast<std::uint64_t>(k)) * 8 + attempt);
      if (slot == dynasoar::kNoBit) return;
      if (k % 3 == 2)
        pool.set(slot);  // give it back: another worker may take it
      else
        dynasoar::platform::atomic_fetch_add(owner + slot, 1u);
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  using namespace dynasoar;
  try {
    // The whole argument must be a number in range: atoll read "12abc" as
    // 12 and "1e6" as 1, and further arguments were ignored.
    if (argc > 2) {
      std::fprintf(stderr, "%s: one argument at most, the number of slots\nusage: %s [slots]\n",
                   argv[0], argv[0]);
      return 2;
    }
    std::uint64_t slots = 1000000;
    if (argc == 2) {
      const char* arg = argv[1];
      char* end = nullptr;
      errno = 0;
      slots = std::strtoull(arg, &end, 10);
      if (!std::isdigit(static_cast<unsigned char>(arg[0])) || *end != '\0' || errno == ERANGE ||
          slots < 1 || slots > kMaxBitmapCapacity) {
        std::fprintf(stderr, "%s: not a number of slots from 1 to %u: %s\nusage: %s [slots]\n",
                     argv[0], kMaxBitmapCapacity, arg, argv[0]);
        return 2;
      }
    }
    const char* where = platform::kCudaBuild ? "GPU threads" : "host threads";
    const std::size_t workers =
        platform::kCudaBuild ? std::min<std::size_t>(65536, platform::max_workers<TakeSlots>()) : 64;
    // Enough attempts that the pool runs dry: each worker keeps two of every three slots.
    const int per_worker = static_cast<int>(slots * 3 / 2 / workers + slots / 10 / workers + 3);

    const auto t0 = std::chrono::steady_clock::now();
    BitmapHandle pool(slots, BitmapHandle::Init::kAllSet);
    std::printf("bitmap of %llu slots: %d levels, %.1f KiB, all free\n",
                static_cast<unsigned long long>(slots), pool.levels(), pool.memory_bytes() / 1024.0);

    platform::Buffer<std::uint32_t> owner(slots);
    owner.zero();
    const std::size_t ran =
        platform::parallel_workers(workers, TakeSlots{pool.device(), owner.data(), per_worker});
    platform::synchronize();
    std::printf("%zu %s each took up to %d slots (stopping when the pool ran dry) and gave every third back\n", ran, where,
                per_worker);

    const std::vector<std::uint32_t> taken = owner.to_vector();
    const std::vector<bit_index> free_slots = pool.indices();
    std::uint64_t kept = 0, twice = 0, lost = 0;
    std::vector<bool> is_free(slots, false);
    for (bit_index s : free_slots) is_free[s] = true;
    for (std::uint64_t s = 0; s < slots; ++s) {
      kept += taken[s] != 0;
      twice += taken[s] > 1;
      lost += taken[s] == 0 && !is_free[s];
      twice += taken[s] != 0 && is_free[s];
    }
    const std::string consistency = pool.check_consistency();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("kept %llu slots, %llu still free (count: %llu), %.1f ms in all\n",
                static_cast<unsigned long long>(kept),
                static_cast<unsigned long long>(free_slots.size()),
                static_cast<unsigned long long>(pool.count()), ms);
    std::printf("slots handed out twice: %llu, slots lost: %llu, levels consistent: %s\n",
                static_cast<unsigned long long>(twice), static_cast<unsigned long long>(lost),
                consistency.empty() ? "yes" : consistency.c_str());
    if (twice != 0 || lost != 0 || !consistency.empty() || kept + free_slots.size() != slots) {
      std::fprintf(stderr, "bitmap_demo: invariant violated\n");
      return 1;
    }
    std::printf("OK\n");
    return 0;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "bitmap_demo: not enough memory for this many slots (std::bad_alloc)\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bitmap_demo: %s\n", e.what());
    return 1;
  }
}
