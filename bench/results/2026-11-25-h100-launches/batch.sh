#!/usr/bin/env bash
# Issue 21 A/B on the GPU machine: soa_bench (empty parallel_do, do-all) at
# 8b244d8 (three launches + memset), a71d55d (snapshot fused into the
# enumeration) and the working tree (no memset, early launch of the do-all,
# do-all batches of DYNASOAR_DO_ALL_BATCH = 1, 2, 4 (default), 8), all built
# Release for sm_90 in this call and run interleaved, twice.
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
conf() { # dir src extra-flags
  cmake -S $2 -B $1 -G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DDYNASOAR_VIEWER_SDL2=OFF -DDYNASOAR_BUILD_BENCH=ON -DDYNASOAR_BUILD_EXAMPLES=OFF -DDYNASOAR_BUILD_TESTS=OFF \
    "-DCMAKE_CUDA_FLAGS=$3" > $OUT/conf-$(basename $1).log 2>&1 && cmake --build $1 --target soa_bench > $OUT/build-$(basename $1).log 2>&1 \
    || { echo "build $1 failed"; grep -m3 -A10 error $OUT/build-$(basename $1).log; }
}
conf build-ab/old .calib/src-8b244d8 "" &
conf build-ab/fused .calib/src-a71d55d "" &
conf build-ab/b4 . "" &
conf build-ab/b1 . "-DDYNASOAR_DO_ALL_BATCH=1" &
conf build-ab/b2 . "-DDYNASOAR_DO_ALL_BATCH=2" &
conf build-ab/b8 . "-DDYNASOAR_DO_ALL_BATCH=8" &
wait
echo "built in $((SECONDS - t0)) s"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for round in 1 2; do
  for v in old fused b1 b2 b4 b8; do
    b=build-ab/$v/bench/soa_bench
    [[ -x $b ]] || continue
    $b --only empty --only do_all --csv $OUT/$v-$round.csv > /dev/null 2>$OUT/$v-$round.err; echo "$v round $round: exit $?"
  done
done
python3 - <<'PY'
import csv, glob, os, collections
out=os.environ['OUT']; rows=collections.defaultdict(dict)
for f in sorted(glob.glob(out+'/*-[12].csv')):
    v,r=os.path.basename(f)[:-4].rsplit('-',1)
    for row in csv.reader(open(f)):
        if len(row)<8 or row[0] not in ('empty_parallel_do','do_all'): continue
        if row[0]=='do_all' and row[1]=='soa_arrays_offset64': continue
        key=(row[0],row[1],row[2]); rows[key][f'{v}-{r}']=row
for key in sorted(rows):
    cells=[]
    for v in ['old','fused','b1','b2','b4','b8']:
        for r in '12':
            row=rows[key].get(f'{v}-{r}')
            if row: cells.append(f'{v}{r}=' + (row[7] if key[0]=='empty_parallel_do' else row[4]) + (f'({row[9]})' if key[0]=='do_all' and row[1]=='dynasoar' else ''))
    print(*key, ' '.join(cells))
PY
echo "total $((SECONDS - t0)) s"
