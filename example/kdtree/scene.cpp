// Scenes for the k-d tree build: three procedural kinds and Wavefront OBJ
// files. Paper 000 (Table 3) builds trees of scanned and modelled scenes of
// 20K to 2.2M triangles; these generators give the same range of sizes with
// three typical distributions: a uniform soup of small triangles, tessellated
// closed surfaces (many triangles that touch their neighbours), and dense
// clusters in mostly empty space.
//
// Host code, compiled by the C++ compiler in every build. The generators use
// only additions, multiplications, divisions and square roots on floats
// (correctly rounded in IEEE arithmetic) and Philox for the random numbers,
// so a scene is the same bit for bit on every machine.
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "example/common/philox.h"
#include "example/kdtree/kdtree.h"

namespace dynasoar::example::kdtree {
namespace {

/// Uniform float in [0, 1) from 24 random bits (exact).
float unit(std::uint64_t seed, std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  return static_cast<float>(random_u32(seed, a, b, c) >> 8) * (1.0f / 16777216.0f);
}

/// The smallest k with k^3 >= n (integer cube root, rounded up).
std::uint32_t cube_side(std::uint64_t n) {
  std::uint32_t k = 1;
  while (std::uint64_t{k} * k * k < n) ++k;
  return k;
}

// Purposes of the random numbers (Philox's third counter word).
enum Purpose : std::uint32_t { kCentre = 0, kCorner = 1, kCluster = 2, kOffset = 3, kSphere = 4 };

/// A small random triangle around `c`, corners within +-half of it per axis.
Triangle small_triangle(std::uint64_t seed, std::uint32_t i, Vec3 c, float half) {
  Triangle t{};
  for (std::uint32_t k = 0; k < 3; ++k) {
    const float dx = unit(seed, i, kCorner, 3 * k) * 2.0f - 1.0f;
    const float dy = unit(seed, i, kCorner, 3 * k + 1) * 2.0f - 1.0f;
    const float dz = unit(seed, i, kCorner, 3 * k + 2) * 2.0f - 1.0f;
    t.v[k] = {c.x + dx * half, c.y + dy * half, c.z + dz * half};
  }
  return t;
}

/// Soup: n triangles of about the mean spacing of their centres, centres uniform in [0, 1)^3.
std::vector<Triangle> soup(std::uint64_t n, std::uint64_t seed) {
  const float half = 0.5f / static_cast<float>(cube_side(n));
  std::vector<Triangle> out(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    const auto id = static_cast<std::uint32_t>(i);
    const Vec3 c{unit(seed, id, kCentre, 0), unit(seed, id, kCentre, 1),
                 unit(seed, id, kCentre, 2)};
    out[i] = small_triangle(seed, id, c, half);
  }
  return out;
}

/// Clustered: eight centres; each triangle picks one and lies at an offset
/// that is roughly normal (the sum of four uniforms) with a spread of 0.04.
std::vector<Triangle> clustered(std::uint64_t n, std::uint64_t seed) {
  constexpr std::uint32_t kClusters = 8;
  Vec3 centres[kClusters];
  for (std::uint32_t k = 0; k < kClusters; ++k)
    centres[k] = {0.15f + 0.7f * unit(seed, k, kCluster, 0),
                  0.15f + 0.7f * unit(seed, k, kCluster, 1),
                  0.15f + 0.7f * unit(seed, k, kCluster, 2)};
  const float half = 0.25f / static_cast<float>(cube_side(n));
  std::vector<Triangle> out(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    const auto id = static_cast<std::uint32_t>(i);
    const Vec3 m = centres[below(random_u32(seed, id, kCluster, 7), kClusters)];
    float d[3];
    for (std::uint32_t a = 0; a < 3; ++a) {
      float s = 0;
      for (std::uint32_t j = 0; j < 4; ++j) s += unit(seed, id, kOffset, 4 * a + j);
      d[a] = (s - 2.0f) * 0.07f;  // sd of the sum of four uniforms: 0.577; 0.577 * 0.07 = 0.04
    }
    out[i] = small_triangle(seed, id, {m.x + d[0], m.y + d[1], m.z + d[2]}, half);
  }
  return out;
}

/// Surface: spheres on a lattice in [0, 1)^3, each a subdivided cube whose
/// vertices are pushed onto the sphere (12 * 8 * 8 = 768 triangles per
/// sphere, random radius); the last sphere is cut off at n triangles.
std::vector<Triangle> surface(std::uint64_t n, std::uint64_t seed) {
  constexpr int kDiv = 8;
  constexpr std::uint64_t kPerSphere = 12 * kDiv * kDiv;
  const std::uint64_t spheres = (n + kPerSphere - 1) / kPerSphere;
  const std::uint32_t side = cube_side(spheres);
  const float cell = 1.0f / static_cast<float>(side);
  std::vector<Triangle> out;
  out.reserve(n);
  for (std::uint64_t s = 0; s < spheres && out.size() < n; ++s) {
    const auto id = static_cast<std::uint32_t>(s);
    const Vec3 c{(static_cast<float>(s % side) + 0.5f) * cell,
                 (static_cast<float>(s / side % side) + 0.5f) * cell,
                 (static_cast<float>(s / side / side) + 0.5f) * cell};
    const float r = cell * (0.2f + 0.25f * unit(seed, id, kSphere, 0));
    // A point of face f (axis a, sign) at grid coordinates (i, j) on the sphere.
    auto point = [&](int f, int i, int j) {
      const int a = f / 2;
      const float sign = f % 2 == 0 ? 1.0f : -1.0f;
      const float u = static_cast<float>(2 * i - kDiv) / kDiv,
                  v = static_cast<float>(2 * j - kDiv) / kDiv;
      float p[3];
      p[a] = sign;
      p[(a + 1) % 3] = u * sign;  // keeps the winding consistent across faces
      p[(a + 2) % 3] = v;
      const float len = std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
      return Vec3{c.x + p[0] / len * r, c.y + p[1] / len * r, c.z + p[2] / len * r};
    };
    for (int f = 0; f < 6; ++f)
      for (int i = 0; i < kDiv; ++i)
        for (int j = 0; j < kDiv; ++j) {
          const Vec3 p00 = point(f, i, j), p10 = point(f, i + 1, j), p01 = point(f, i, j + 1),
                     p11 = point(f, i + 1, j + 1);
          if (out.size() < n) out.push_back({{p00, p10, p11}});
          if (out.size() < n) out.push_back({{p00, p11, p01}});
        }
  }
  return out;
}

// --- Wavefront OBJ ---------------------------------------------------------------------

[[noreturn]] void obj_error(const std::string& file, std::uint64_t line, const std::string& what) {
  throw std::runtime_error(file + ":" + std::to_string(line) + ": " + what);
}

/// Splits a line into words at blanks.
std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
    const std::size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\r') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::vector<Triangle> load_obj(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file + ": cannot open the file");
  std::vector<Vec3> vertices;
  std::vector<Triangle> tris;
  std::string line;
  std::uint64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    const std::vector<std::string> w = words(line);
    if (w.empty()) continue;
    if (w[0] == "v") {
      if (w.size() < 4 || w.size() > 5)
        obj_error(file, number,
                  "a vertex needs 3 coordinates (and an optional w), got " +
                      std::to_string(w.size() - 1));
      float xyz[3];
      for (int k = 0; k < 3; ++k) {
        const char* s = w[k + 1].c_str();
        char* end = nullptr;
        errno = 0;
        xyz[k] = std::strtof(s, &end);
        if (end == s || *end != '\0' || errno == ERANGE || !std::isfinite(xyz[k]))
          obj_error(file, number, "vertex coordinate \"" + w[k + 1] + "\" is not a finite number");
      }
      vertices.push_back({xyz[0], xyz[1], xyz[2]});
    } else if (w[0] == "f") {
      if (w.size() < 4)
        obj_error(file, number,
                  "a face needs at least 3 vertices, got " + std::to_string(w.size() - 1));
      std::vector<std::size_t> face;
      for (std::size_t k = 1; k < w.size(); ++k) {
        // "i", "i/t", "i//n" or "i/t/n": only the vertex index i matters here.
        const std::string index = w[k].substr(0, w[k].find('/'));
        const char* s = index.c_str();
        char* end = nullptr;
        errno = 0;
        const long long i = std::strtoll(s, &end, 10);
        if (index.empty() || end == s || *end != '\0' || errno == ERANGE)
          obj_error(file, number,
                    "face vertex \"" + w[k] + "\" does not start with a vertex index");
        // Negative indices count back from the last vertex defined so far.
        const long long resolved = i < 0 ? static_cast<long long>(vertices.size()) + i : i - 1;
        if (i == 0 || resolved < 0 || resolved >= static_cast<long long>(vertices.size()))
          obj_error(file, number,
                    "vertex index " + std::to_string(i) + " is out of range (" +
                        std::to_string(vertices.size()) + " vertices defined so far)");
        face.push_back(static_cast<std::size_t>(resolved));
      }
      for (std::size_t k = 1; k + 1 < face.size(); ++k)  // a fan around the first vertex
        tris.push_back({{vertices[face[0]], vertices[face[k]], vertices[face[k + 1]]}});
    }
    // Other statements (vt, vn, o, g, s, usemtl, mtllib, l, ...) do not matter for the build.
  }
  if (tris.empty()) throw std::runtime_error(file + ": no faces (the file has no \"f\" lines)");
  if (tris.size() >= (std::uint64_t{1} << 31))
    throw std::runtime_error(file + ": too many triangles");
  return tris;
}

}  // namespace

std::vector<Triangle> make_scene(const Config& c) {
  if (!c.obj_file.empty()) return load_obj(c.obj_file);
  if (c.triangles == 0 || c.triangles >= (std::uint64_t{1} << 31))
    throw std::invalid_argument("--triangles: from 1 to 2^31 - 1");
  if (c.scene == "soup") return soup(c.triangles, c.seed);
  if (c.scene == "surface") return surface(c.triangles, c.seed);
  if (c.scene == "clustered") return clustered(c.triangles, c.seed);
  throw std::invalid_argument("--scene: " + c.scene + " is not one of soup, surface, clustered");
}

std::vector<Box> triangle_bounds(const std::vector<Triangle>& tris) {
  std::vector<Box> out(tris.size());
  for (std::size_t i = 0; i < tris.size(); ++i) {
    const Triangle& t = tris[i];
    Box b{{t.v[0].x, t.v[0].y, t.v[0].z}, {t.v[0].x, t.v[0].y, t.v[0].z}};
    for (int k = 1; k < 3; ++k) {
      const float p[3] = {t.v[k].x, t.v[k].y, t.v[k].z};
      for (int a = 0; a < 3; ++a) {
        b.lo[a] = p[a] < b.lo[a] ? p[a] : b.lo[a];
        b.hi[a] = p[a] > b.hi[a] ? p[a] : b.hi[a];
      }
    }
    out[i] = b;
  }
  return out;
}

Box scene_bounds(const std::vector<Box>& bounds) {
  Box s = bounds.at(0);
  for (const Box& b : bounds)
    for (int a = 0; a < 3; ++a) {
      s.lo[a] = b.lo[a] < s.lo[a] ? b.lo[a] : s.lo[a];
      s.hi[a] = b.hi[a] > s.hi[a] ? b.hi[a] : s.hi[a];
    }
  return s;
}

}  // namespace dynasoar::example::kdtree
