// Creating an example's heap the same way on every back end: the byte
// allocators also get room in their object registries for `objects` objects
// per class from the start (they would otherwise begin with 2^20 and fail a
// `new` that finds a registry full between two compactions).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <dynasoar/dynasoar.h>

namespace dynasoar::example {

template <class Handle>
Handle make_heap(std::uint64_t bytes, std::uint64_t objects) {
  if constexpr (std::is_constructible_v<Handle, std::uint64_t, ByteHandleOptions>) {
    ByteHandleOptions options;
    options.registry_capacity = std::max(options.registry_capacity, objects);
    return Handle(bytes, options);
  } else {
    return Handle(bytes);
  }
}

}  // namespace dynasoar::example
