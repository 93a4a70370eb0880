"""Share of perf samples whose innermost managed frame matches a pattern, by function.
Usage: perf script -i perf.data > perf.txt; python3 self_by_function.py perf.txt '\[Snapper\] ' [top]"""
import re,collections,sys
stacks=open(sys.argv[1]).read().split('\n\n')
pat=sys.argv[2] if len(sys.argv)>2 else r'\[Snapper\] '
c=collections.Counter(); n=0
for s in stacks:
    lines=[l.strip() for l in s.split('\n')[1:] if l.strip()]
    if not lines: continue
    n+=1
    for l in lines:
        if re.search(r'\[(Snapper[^\]]*|Orleans[^\]]*|System[^\]]*|Microsoft[^\]]*)\] ',l):
            if re.search(pat,l):
                f=re.sub(r'^\S+ ','',l); f=re.sub(r'\(/tmp.*','',f); f=re.sub(r'\[OptimizedTier1\]|\[Optimized\]','',f)
                f=re.sub(r'\+0x[0-9a-f]+','',f)
                c[f[:170]]+=1
            break
tot=sum(c.values())
print(f"total {100*tot/n:.1f}%")
for k,v in c.most_common(int(sys.argv[3]) if len(sys.argv)>3 else 30): print(f"{100*v/n:5.2f}% {k}")
