#!/usr/bin/env bash
# Issue 21: the examples on the heap at 8b244d8 and on the working tree
# (separate snapshot, launched early, no memset), with the hand-written
# baseline, interleaved, 3 rounds; medians of total_ms.
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
for v in old new; do
  src=.; [[ $v == old ]] && src=.calib/src-8b244d8
  cmake -S $src -B build-ab/$v-ex -G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DDYNASOAR_VIEWER_SDL2=OFF -DDYNASOAR_BUILD_BENCH=OFF -DDYNASOAR_BUILD_TESTS=OFF > $OUT/conf-$v.log 2>&1
  targets="wator_dynasoar gol_dynasoar nbody_dynasoar"; [[ $v == new ]] && targets="$targets wator_baseline gol_baseline nbody_baseline"
  cmake --build build-ab/$v-ex -j8 --target $targets > $OUT/build-$v.log 2>&1 || { grep -m3 -A8 error $OUT/build-$v.log; exit 1; } &
done
wait
echo "built in $((SECONDS - t0)) s"
python3 - <<'PY'
import subprocess, json, statistics, os
out=os.environ['OUT']
cases={'wator':'--width 2048 --height 2560 --steps 500','gol':'--width 2048 --height 2048 --steps 300 --density 0.3',
       'nbody':'--bodies 20000 --steps 1000'}
res={}
rows=[]
for rnd in range(3):
  for ex,args in cases.items():
    for variant,prog in [('old','build-ab/old-ex/example/%s_dynasoar'%ex),('new','build-ab/new-ex/example/%s_dynasoar'%ex),('baseline','build-ab/new-ex/example/%s_baseline'%ex)]:
      p=subprocess.run([prog]+args.split()+['--json','--quiet'],capture_output=True,text=True,timeout=120)
      if p.returncode!=0: print(ex,variant,'exit',p.returncode,p.stderr[-300:]); continue
      r=json.loads(p.stdout); res.setdefault((ex,variant),[]).append(r['total_ms'])
      rows.append(f"{ex},{variant},{rnd},{r['total_ms']:.3f},{r['checksum']}")
open(out+'/examples.csv','w').write('example,variant,round,total_ms,checksum\n'+'\n'.join(rows)+'\n')
for ex in cases:
  b=statistics.median(res.get((ex,'baseline'),[float('nan')]))
  print(ex, ' '.join(f"{v}={statistics.median(res[(ex,v)]):.1f}ms({statistics.median(res[(ex,v)])/b:.2f}x)" for v in ['old','new','baseline'] if (ex,v) in res))
PY
echo "total $((SECONDS - t0)) s"
