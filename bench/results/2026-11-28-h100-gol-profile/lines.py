#!/usr/bin/env python3
"""Stall samples and executed instructions of one kernel per source line.

  lines.py SASS_CSV DISASM USER_FILE [TOP]

SASS_CSV: `ncu --page source --csv --print-source sass` of one kernel;
DISASM: `nvdisasm --print-line-info-inline` of the cubin that holds it
(same build). Instructions are matched by their offset from the kernel's
first instruction; each is charged to its innermost source line (the
file's base name and the line), and to the innermost line of USER_FILE
(a base name, e.g. objects.cpp) it was inlined from (second table)."""
import csv, re, sys
from collections import defaultdict

sass_csv, disasm, user = sys.argv[1], sys.argv[2], sys.argv[3]
top = int(sys.argv[4]) if len(sys.argv) > 4 else 25
rows = list(csv.reader(open(sass_csv)))
name = rows[0][1] if rows and rows[0] and rows[0][0] == "Kernel Name" else ""
hdr = rows[1]
col = {h: i for i, h in enumerate(hdr)}
data = [r for r in rows[2:] if len(r) == len(hdr)]
base = int(data[0][col["Address"]], 16)
by_off = {int(r[col["Address"]], 16) - base: r for r in data}

# nvdisasm: find the function whose instruction list matches (by first opcodes).
funcs, cur, loc, chain_open = {}, None, None, False
for line in open(disasm):
    m = re.match(r"\s*\.text\.(\S+):", line)
    if m:
        cur = m.group(1); funcs[cur] = []; loc = None; chain_open = False; continue
    if "//##" in line:
        # A run of these lines before an instruction is its chain, the
        # innermost first, each with its caller; a new run starts a new chain.
        at = tuple(f.split("/")[-1] + ":" + n for f, n in re.findall(r'"([^"]+)", line (\d+)', line))
        loc = (loc + at) if chain_open else at
        chain_open = True
        continue
    m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
    if m and cur is not None:
        funcs[cur].append((int(m.group(1), 16), m.group(2).strip(), loc))
        chain_open = False

def opcode(text): return text.split()[1] if text.startswith("@") else text.split()[0]
def agree(f): return sum(1 for off, text, _ in funcs[f] if off in by_off and opcode(text) == opcode(by_off[off][col["Source"]].strip()))
best = max(funcs, key=lambda f: (agree(f), -abs(len(funcs[f]) - len(by_off))))
ins = funcs[best]
match = agree(best)
print(f"kernel {name[:160]}\nfunction {best[:120]}: {len(ins)} instructions, {len(by_off)} profiled, {match} opcodes agree")

samples = defaultdict(int); execs = defaultdict(int); threads = defaultdict(int); outer = defaultdict(int)
total = 0
for off, text, l in ins:
    r = by_off.get(off)
    if r is None: continue
    s = int(r[col["Warp Stall Sampling (All Samples)"]] or 0)
    e = int(r[col["Instructions Executed"]] or 0)
    t = int(r[col["Thread Instructions Executed"]] or 0)
    key = l[0] if l else "?"
    samples[key] += s; execs[key] += e; threads[key] += t; total += s
    outer[next((f for f in (l or ()) if f.startswith(user + ":")), "?")] += s
te = sum(execs.values())
print(f"{total} stall samples, {te} warp instructions executed")
print("innermost line: samples, share, warp instructions, avg threads")
for k in sorted(samples, key=lambda k: -samples[k])[:top]:
    print(f"  {k:34} {samples[k]:7} {100*samples[k]/max(total,1):5.1f}% {execs[k]:10} {threads[k]/max(execs[k],1):5.1f}")
print(f"innermost line of {user}: samples, share")
for k in sorted(outer, key=lambda k: -outer[k])[:top]:
    print(f"  {k:34} {outer[k]:7} {100*outer[k]/max(total,1):5.1f}%")
