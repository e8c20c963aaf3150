import csv, glob, os, sys, collections
out=sys.argv[1]; rows=collections.defaultdict(dict); variants=[]
for f in sorted(glob.glob(out+'/ab-*-[12].csv')):
    v,r=os.path.basename(f)[3:-4].rsplit('-',1)
    if v not in variants: variants.append(v)
    for row in csv.reader(open(f)):
        if len(row)<8 or row[0] not in ('empty_parallel_do','do_all','registers'): continue
        if row[0]=='do_all' and row[1]=='soa_arrays_offset64': continue
        rows[(row[0],row[1],row[2])][f'{v}-{r}']=row
order=['old','fused','new']
for key in sorted(rows, key=lambda k:(k[0],k[1],int(k[2]) if k[2].isdigit() else 0)):
    cells=[]
    for v in order:
        for r in '12':
            row=rows[key].get(f'{v}-{r}')
            if not row: continue
            val=row[7] if key[0] in ('empty_parallel_do','registers') else row[4]
            cells.append(f'{v}{r}={val}'+(f'({row[9]})' if key[0]=='do_all' and row[1]=='dynasoar' else ''))
    print(*key, ' '.join(cells))
