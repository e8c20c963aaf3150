// The network's arrays in device memory (host memory in a host build), for
// both versions: the object version reads them while it builds its cells, the
// baseline for the whole run.
#pragma once

#include <cstdint>
#include <vector>

#include "dynasoar/platform/memory.h"
#include "example/traffic/rules.h"
#include "example/traffic/traffic.h"

namespace dynasoar::example::traffic {

class DeviceNetwork {
 public:
  DeviceNetwork(const Network& n, platform::Stream s)
      : exit_(upload(n.exit, s)), speed_(upload(n.speed, s)), flags_(upload(n.flags, s)), out_(upload(n.out, s)),
        out_degree_(upload(n.out_degree, s)), in_(upload(n.in, s)), in_degree_(upload(n.in_degree, s)) {
    view_ = NetView{n.cells(),     n.intersections,    exit_.data(), speed_.data(),    flags_.data(),
                    out_.data(),   out_degree_.data(), in_.data(),   in_degree_.data()};
  }

  const NetView& view() const { return view_; }

 private:
  template <class T>
  static platform::Buffer<T> upload(const std::vector<T>& v, platform::Stream s) {
    platform::Buffer<T> b(v.size());
    b.copy_from_host(v.data(), v.size(), s);
    return b;
  }

  platform::Buffer<std::int32_t> exit_;
  platform::Buffer<std::uint8_t> speed_, flags_;
  platform::Buffer<std::int32_t> out_;
  platform::Buffer<std::uint8_t> out_degree_;
  platform::Buffer<std::int32_t> in_;
  platform::Buffer<std::uint8_t> in_degree_;
  NetView view_;
};

}  // namespace dynasoar::example::traffic
