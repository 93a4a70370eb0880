"""Share of perf samples by the assembly of the innermost managed frame, and whether the leaf is JIT code, coreclr, libc or the kernel.
Usage: python3 by_assembly.py perf.txt"""
import re,collections,sys
stacks=open(sys.argv[1]).read().split('\n\n')
c=collections.Counter(); n=0
for s in stacks:
    lines=[l.strip() for l in s.split('\n')[1:] if l.strip()]
    if not lines: continue
    n+=1
    # walk from leaf to first managed frame with [Assembly]
    key='native'
    for l in lines:
        m=re.search(r'\[(Snapper[^\]]*|Orleans[^\]]*|System[^\]]*|Microsoft[^\]]*)\] ',l)
        if m: key=m.group(1).split('.')[0] if not m.group(1).startswith('Snapper') else m.group(1); break
        if 'libcoreclr' in l or 'kernel' in l or 'libc' in l: pass
    leaf=lines[0]
    kind='coreclr' if 'libcoreclr' in leaf else ('kernel' if 'kernel' in leaf else ('libc' if 'libc' in leaf else 'jit'))
    c[(key,kind)]+=1
for k,v in sorted(c.items(), key=lambda x:-x[1])[:25]: print(f"{100*v/n:5.1f}% {k}")
