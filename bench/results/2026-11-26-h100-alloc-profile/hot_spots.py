#!/usr/bin/env python3
"""Top instructions of an Nsight Compute source page (SASS, CSV) by stall
samples, with their execution counts and two main stall reasons.

    ncu -i REPORT --page source --csv --print-source sass > source-sass.csv
    hot_spots.py source-sass.csv [N]
"""
import csv
import sys

rows = list(csv.reader(open(sys.argv[1])))
top = int(sys.argv[2]) if len(sys.argv) > 2 else 30
head = rows[1]
samples = head.index("Warp Stall Sampling (All Samples)")
executed = head.index("Instructions Executed")
stalls = [j for j, c in enumerate(head) if c.startswith("stall_") and "Not Issued" not in c]
body = [(k, r) for k, r in enumerate(rows[2:]) if len(r) > executed]
total = sum(float(r[samples] or 0) for _, r in body)
print(f"{len(body)} instructions, {total:.0f} stall samples, "
      f"{sum(float(r[executed] or 0) for _, r in body):.0f} warp instructions executed")
for k, r in sorted(body, key=lambda x: -float(x[1][samples] or 0))[:top]:
    reasons = sorted(((float(r[j] or 0), head[j][6:]) for j in stalls), reverse=True)[:2]
    print(f"{100 * float(r[samples] or 0) / total:5.1f}%  #{k:<5} executed {r[executed]:>8}  "
          f"{r[1].strip()[:58]:58}  {', '.join(f'{n} {int(v)}' for v, n in reasons)}")
