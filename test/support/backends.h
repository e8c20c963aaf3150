// The back ends the typed suites run on (every back end of dynasoar/backend.h)
// and the names GoogleTest gives their instances (BackendConformance/dynasoar, ...).
#pragma once

#include <dynasoar/dynasoar.h>
#include <gtest/gtest.h>

#include <string>

namespace dynasoar::test {

using AllBackends = ::testing::Types<backend::Dynasoar, backend::CMalloc, backend::CFMalloc, backend::CMMalloc,
                                     backend::CFMMalloc, backend::CudaMalloc, backend::AtomicMalloc,
                                     backend::AWMalloc>;

struct BackendNames {
  template <class B>
  static std::string GetName(int) {
    return B::kName;
  }
};

}  // namespace dynasoar::test
