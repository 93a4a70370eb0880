"""Samples of each JIT-compiled function by instruction group: where inside a function the time goes.

Usage: run the process with DOTNET_JitDisasm='<functions>' DOTNET_JitStdOutFile=listing.txt and perf recording it (with
DOTNET_PerfMapEnabled=3), then `perf script > perf.txt` and
  python3 hot_instructions.py listing.txt perf.txt [groups per function]
The listing and the samples must come from the same process: offsets are those of its Tier1 code.
"""
import re,collections,sys
listing=open(sys.argv[1]).read().split('; Assembly listing for method ')
t1={}
for part in listing[1:]:
    head=part.split('\n',1)[0]
    if '(Tier1)' not in head: continue
    t1[head]=part
samples=collections.defaultdict(collections.Counter); tot=0
for block in open(sys.argv[2]).read().split('\n\n'):
    lines=[l.strip() for l in block.split('\n')[1:] if l.strip()]
    if not lines: continue
    tot+=1
    m=re.search(r'\] (\S+)\(.*\+0x([0-9a-f]+) ',lines[0]) or re.search(r'\] (\S+?)\(.*\+0x([0-9a-f]+)',lines[0])
    if m: samples[m.group(1)][int(m.group(2),16)]+=1
def key(head):
    return head.split('(')[0]
for head,part in t1.items():
    name=key(head)
    # find perf name with matching pieces
    cands=[k for k in samples if k.replace('::',':')==name]
    cnt=collections.Counter()
    for k in cands: cnt.update(samples[k])
    n=sum(cnt.values())
    if not n: continue
    print(f"=== {name[:110]}  {100*n/tot:.2f}% self")
    igs=[(int(o,16),l) for l,o in re.findall(r'\n(G_M\d+_IG\d+):\s+;; offset=0x([0-9A-F]+)',part)]
    igs.sort()
    body=part.split('\n')
    byig=collections.Counter()
    for off,c in cnt.items():
        ig=[g for g in igs if g[0]<=off]
        byig[ig[-1][1] if ig else '?']+=c
    for ig,c in byig.most_common(int(sys.argv[3]) if len(sys.argv)>3 else 3):
        print(f"  {100*c/tot:.2f}% {ig}")
        i=[j for j,l in enumerate(body) if l.startswith(ig+':')][0]
        for l in body[max(0,i-6):i+9]: print('     ',l[:150])
