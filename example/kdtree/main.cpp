// k-d tree build from the command line: options, progress, report. The
// build itself is linked in: objects.cpp for a back end of the framework,
// raw.cpp for a raw allocator, baseline.cpp for the host reference.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "example/common/cli.h"
#include "example/kdtree/kdtree.h"
#include "example/viewer/render.h"
#include "example/viewer/session.h"

int main(int argc, char** argv) {
  using namespace dynasoar::example;
  return guarded_main([&]() -> int {
    CLI::App app{
        "k-d tree build with per-node triangle reference arrays (Vinkler & Havran 2014, Sec. 6 [DS], Table 3)"};
    kdtree::Config c;
    CommonOptions o;
    CLI::Option* scene = app.add_option("--scene", c.scene, "procedural scene")
                             ->capture_default_str()
                             ->check(CLI::IsMember({"soup", "surface", "clustered"}));
    CLI::Option* triangles =
        app.add_option("--triangles", c.triangles, "triangles of a procedural scene")
            ->capture_default_str()
            ->check(CLI::Range(std::uint64_t{1}, (std::uint64_t{1} << 31) - 1));
    app.add_option("--obj", c.obj_file, "build the tree of a Wavefront OBJ file instead")
        ->check(CLI::ExistingFile)
        ->excludes(scene)
        ->excludes(triangles);
    app.add_option("--leaf-size", c.leaf_size, "a node with at most this many references is a leaf")
        ->capture_default_str()
        ->check(CLI::Range(1, 1 << 20));
    app.add_option("--max-depth", c.max_depth, "nodes at this depth are leaves")
        ->capture_default_str()
        ->check(CLI::Range(0, 64));
    app.add_option("--rays", c.rays, "verification: closest-hit rays compared with brute force")
        ->capture_default_str()
        ->check(CLI::Range(0, 1 << 20));
    app.add_option("--wide-refs", c.wide_refs,
                   "object form: split a node with at least this many references by many warps, each a segment "
                   "of its chunks (0: never; the tree is the same)")
        ->capture_default_str()
        ->check(CLI::Range(0, 1 << 30));
    bool thread_per_node = false;
    app.add_flag("--thread-per-node", thread_per_node,
                 "GPU: split every node with one thread instead of the lanes of a warp together");
    // A build has levels, not steps, and an integer checksum.
    add_common_options(app, o, /*stepped=*/false);
    CLI11_PARSE(app, argc, argv);
    o.view.hold = o.view.render;  // one picture: the window stays until q
    c.seed = o.seed;
    c.warp_per_node = !thread_per_node;
    c.heap_bytes = o.heap_mib << 20;
    c.on_level = progress_printer("k-d tree (levels)", c.max_depth, o);
    viewer::Session view(o.view, "kdtree", "k-d tree", 0);
    if (view.active())
      c.on_tree = [&view](const kdtree::TreePicture& p) {
        view.show(
            0, viewer::kKdtreeWidth, viewer::kKdtreeHeight,
            [&p](viewer::Canvas& out) { viewer::render(p, out); }, viewer::population(p));
      };
    const int code = finish(kdtree::run(c), o);
    view.hold();
    return code;
  });
}
