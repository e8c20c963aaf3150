#!/usr/bin/env bash
# On a GPU machine, from the repository root: builds every k-d tree program,
# runs the k-d tree golden runs (scripts/gpu-check.sh on those programs only),
# and times the object form on the heap against the host baseline on the
# three scenes at 2M triangles (3 runs each), then every object form on the soup.
#   bench/results/2026-11-27-kdtree/run.sh OUT
set -uo pipefail
out=${1:?usage: run.sh OUT}
T="kdtree_baseline kdtree_bitmap_alloc kdtree_cfmalloc kdtree_cfmmalloc kdtree_cmalloc kdtree_cmmalloc
   kdtree_cuda_malloc kdtree_dynasoar kdtree_scatter_alloc kdtree_xmalloc kdtree_raw_atomic_malloc
   kdtree_raw_cfmalloc kdtree_raw_cfmmalloc kdtree_raw_cmalloc kdtree_raw_cmmalloc kdtree_raw_cuda_malloc
   kdtree_raw_scatter_alloc kdtree_raw_xmalloc"
mkdir -p "$out"
# shellcheck disable=SC2086
DEPS_PREFIX=${DEPS_PREFIX:-$PWD/.gpu-deps/usr} JOBS=16 scripts/build-gpu.sh $T >"$out/build.log" 2>&1 || { tail "$out/build.log"; exit 1; }
GIT_COMMIT=${GIT_COMMIT:-unknown} TEST_TIMEOUT=240 scripts/gpu-check.sh build-gpu/bin "$out/golden" tests >"$out/golden.log" 2>&1
echo "golden: exit $?, $(grep -c 'golden run' "$out/golden/summary.txt") runs, $(grep 'golden run' "$out/golden/summary.txt" | grep -vc 'exit 0') not exit 0"
for scene in soup surface clustered; do
  python3 bench/examples/run_examples.py --bin build-gpu/bin --example kdtree --name "kdtree-$scene" \
    --variants dynasoar,baseline --args "--scene $scene --triangles 2000000" --reps 3 --timeout 60 --out "$out" \
    2>&1 | tail -4
done
python3 bench/examples/run_examples.py --bin build-gpu/bin --example kdtree --name kdtree-soup-objects \
  --variants dynasoar,bitmap_alloc,scatter_alloc,xmalloc,cfmmalloc,cmmalloc,cfmalloc,cmalloc,cuda_malloc \
  --args "--scene soup --triangles 2000000" --reps 1 --timeout 20 --out "$out" 2>&1 | tail -13
