// The back ends the typed suites run on (every back end of backend::All)
// and the names GoogleTest gives their instances (BackendConformance/dynasoar, ...).
#pragma once

#include <dynasoar/dynasoar.h>
#include <gtest/gtest.h>

#include <string>

namespace dynasoar::test {

template <class List>
struct GTestTypes;
template <class... Bs>
struct GTestTypes<model::TypeList<Bs...>> {
  using type = ::testing::Types<Bs...>;
};

/// Every back end of backend::All, as GoogleTest's type list.
using AllBackends = GTestTypes<backend::All>::type;

struct BackendNames {
  template <class B>
  static std::string GetName(int) {
    return B::kName;
  }
};

}  // namespace dynasoar::test
