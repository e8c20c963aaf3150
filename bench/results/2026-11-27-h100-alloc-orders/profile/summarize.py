#!/usr/bin/env python3
"""Top stall locations of the SASS source page (ncu --page source --csv --print-source sass)."""
import csv, gzip, sys
rows = list(csv.reader(gzip.open(sys.argv[1], "rt")))
hdr, data = rows[1], rows[2:]
idx = {h: i for i, h in enumerate(hdr)}
reasons = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
total = sum(int(r[2]) for r in data)
print(f"{len(data)} instructions, {total} warp stall samples")
print("top instructions: index, samples, share, executions, SASS, main stall reasons")
for i in sorted(range(len(data)), key=lambda i: -int(data[i][2]))[:14]:
    r = data[i]
    br = sorted(((h[6:], int(r[idx[h]])) for h in reasons if r[idx[h]] not in ("0", "", "-")), key=lambda x: -x[1])[:2]
    print(f"{i:5} {r[2]:>6} {100 * int(r[2]) / total:5.1f}% {r[5]:>7}  {r[1].strip()[:48]:48} {br}")
