// Uses the installed (or add_subdirectory'd) library through the umbrella
// header and checks a few results, so a broken include path, target or
// package config fails the test instead of only the compile.
#include <cstdio>
#include <vector>

#include <dynasoar/dynasoar.h>

int main() {
  dynasoar::HierarchicalBitmap bitmap(1000);
  const dynasoar::BitmapRef ref = bitmap.ref();
  dynasoar::platform::parallel_for(1000, [ref](std::size_t i) {
    if (i % 3 == 0) ref.set(static_cast<dynasoar::bit_index>(i));
  });
  const std::vector<dynasoar::bit_index> set = bitmap.indices();
  bool ok = bitmap.count() == 334 && set.size() == 334 && bitmap.check_consistency().empty();
  for (std::size_t k = 0; ok && k < set.size(); ++k) ok = set[k] == 3 * k;
  std::printf("consumer: %zu bits set, %s\n", set.size(), ok ? "OK" : "WRONG");
  return ok ? 0 : 1;
}
