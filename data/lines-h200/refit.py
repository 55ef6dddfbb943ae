#!/usr/bin/env python3
"""refit.py -- item 3 of "Kernels at every shape" (an untuned N's config
predicted from its tuned neighbours, chunks per thread interpolated)
replayed on fill.db (every variant of the default sweeps' families at 16
untuned shapes, GPU-b01b9858): for each shape, the header's entries of the
nearest tuned N on each side (of both kinds of row start) at the same M,
each refitted to the asked N (its family, or the shifted twin where the
rows start off their 128-byte lines; its params, with chunks the fewest
that cover N), and the refit's stored time there over the shape's best.
Then four rules over those candidates: the nearest entry refitted, the
one with the fewest idle lanes of the two nearest or of all four, and the
faster of the two nearest (an oracle).
  python3 data/lines-h200/refit.py kernels/normtune_dispatch.h fill.db
(fill.db: xz -dk data/lines-h200/fill.db.xz)."""
import re, sqlite3, math, collections
import sys
H=open(sys.argv[1]).read()
fams={int(a):b for a,b in re.findall(r'X\((\d+), "(rmsnorm_[a-z_]+\.[a-z]+)", "[0-9a-f]+"\)',H)}
cfgs={}
for cid,fam,dt,params in re.findall(r'X\((\d+), (\d+), "([^"]+)", "([^"]+)", \d+, \d+\)',H):
    cfgs[int(cid)]=(fams[int(fam)],dt,params)
probs=re.findall(r'X\((\d+), "(rmsnorm_\w+)", "([^"]+)", (-?\d+), (\d+), (\d+)\)',H)
ent=re.findall(r'\{(\d+)LL, (\d+)LL, (-?\d+), ([\d.]+), ([\d.]+), (-?\d+)(?:, \d)?\}',H)
ent=[(int(a),int(b),int(c),int(f)) for a,b,c,d,e,f in ent]
P={}
for pid,op,dt,fb,first,n in probs:
    P[(op,dt)]=ent[int(first):int(first)+int(n)]
db=sqlite3.connect(sys.argv[2])
rows=db.execute("""select s.op,s.M,s.N,v.family,v.params,r.median_us from result r join shape s on s.id=r.shape_id
 join variant v on v.id=r.variant_id where r.status='ok'""").fetchall()
T=collections.defaultdict(dict)
for op,M,N,f,p,us in rows: T[(op,M,N)][(f,p)]=us
grown={'rmsnorm_bwd.persistent':'rmsnorm_bwd.aligned','rmsnorm_fwd.row':'rmsnorm_fwd.arow','rmsnorm_fwd.warp':'rmsnorm_fwd.awarp'}
def pd(s): return dict(kv.split('=') for kv in s.split(','))
def ps(d,order): return ','.join(f'{k}={d[k]}' for k in order)
def refit(fam,params,N,E=8):
    d=pd(params); order=[kv.split('=')[0] for kv in params.split(',')]
    lanes=int(d['tpr']) if 'tpr' in d else int(d['block'])
    if 'cluster' in d: lanes*=int(d['cluster'])
    d['chunks']=str(max(1,-(-N//(lanes*E))))
    return ps(d,order), lanes*int(d['chunks'])*E
DT={'rmsnorm_bwd':'x=bf16,w=bf16,dw=f32','rmsnorm_fwd':'x=bf16,w=bf16'}
res=collections.defaultdict(list)
for (op,M,N),tab in sorted(T.items()):
    best=min(tab.values())
    es=[e for e in P[(op,DT[op])] if e[1]==M]
    Ns=sorted(set(e[0] for e in es))
    lo=max([n for n in Ns if n<N and n%64==0],default=None); hi=min([n for n in Ns if n>N and n%64==0],default=None)
    lo8=max([n for n in Ns if n<N and n%64!=0],default=None); hi8=min([n for n in Ns if n>N and n%64!=0],default=None)
    off = N%64!=0
    cands=[]
    for nb in [lo,hi,lo8,hi8]:
        if nb is None: continue
        c=[e for e in es if e[0]==nb][0]
        fam,dt,params=cfgs[c[2]]
        for f2 in ([fam] + ([grown[fam]] if fam in grown else [])):
            p2,cols=refit(fam,params,N)
            if f2!=fam and f2 not in ('rmsnorm_bwd.aligned','rmsnorm_fwd.arow','rmsnorm_fwd.awarp'): continue
            us=tab.get((f2,p2))
            cands.append((nb,f2,p2,cols,us))
    line=f'{op[8:]} {M:6d} {N:6d} best {best:8.2f}'
    for nb,f2,p2,cols,us in cands:
        line+=f' | {nb} {f2[12:17]} {p2[:30]} {"%.3f"%(us/best) if us else "-"}'
    print(line)

print()
def evaluate(rule):
    out=collections.defaultdict(list)
    for (op,M,N),tab in sorted(T.items()):
        best=min(tab.values())
        es=[e for e in P[(op,DT[op])] if e[1]==M]
        off=N%64!=0
        line=64 if op=='rmsnorm_bwd' else 0
        def dist(n):
            d=abs(N-n)
            if line and ((N%64==0)!=(n%64==0)): d+=N//8
            return d
        nbs=sorted(set(e[0] for e in es), key=lambda n:(dist(n),-n))
        cands=[]
        for rank,nb in enumerate(nbs[:4]):
            c=[e for e in es if e[0]==nb][0]
            fam,dt,params=cfgs[c[2]]
            f2=fam
            if off and fam in grown: f2=grown[fam]
            if fam=='rmsnorm_bwd.held': f2='rmsnorm_bwd.aligned' if off else 'rmsnorm_bwd.persistent'
            p2,cols=refit(fam,params,N)
            if fam=='rmsnorm_bwd.held': p2=p2
            us=tab.get((f2,p2))
            cands.append(dict(rank=rank,nb=nb,f=f2,p=p2,waste=(cols-N)/cols,us=us,d=dist(nb)))
        pick=rule(cands)
        r=(pick['us']/best) if pick and pick['us'] else None
        out[op].append(r)
    for op,rs in out.items():
        ok=[r for r in rs if r]
        print(f'  {op}: n={len(ok)}/{len(rs)} geo {math.exp(sum(map(math.log,ok))/len(ok)):.4f} worst {max(ok):.3f} within2 {sum(r<=1.02 for r in ok)}')
def r_nearest(c): 
    c=[x for x in c if x['us']]; return c[0] if c else None
def r_minwaste(c):
    c=[x for x in c[:2] if x['us']]; return min(c,key=lambda x:(round(x['waste'],2),x['rank'])) if c else None
def r_minwaste4(c):
    c=[x for x in c if x['us']]; return min(c,key=lambda x:(round(x['waste'],2),x['rank'])) if c else None
def r_oracle2(c):
    c=[x for x in c[:2] if x['us']]; return min(c,key=lambda x:x['us']) if c else None
for name,r in [('nearest refit',r_nearest),('minwaste of 2',r_minwaste),('minwaste of 4',r_minwaste4),('oracle of 2',r_oracle2)]:
    print(name); evaluate(r)
