"""Share of perf samples by the innermost Snapper frame on the stack (what Snapper operation the time was spent under).
Usage: python3 by_nearest_snapper_frame.py perf.txt [top]"""
import re,collections,sys
stacks=open(sys.argv[1]).read().split('\n\n')
c=collections.Counter(); n=0
for s in stacks:
    lines=[l.strip() for l in s.split('\n')[1:] if l.strip()]
    if not lines: continue
    n+=1
    key='(none)'
    for l in lines:
        m=re.search(r'\[(Snapper[^\]]*)\] (\S+)',l)
        if m:
            f=re.sub(r'\(.*','',m.group(2)); key=m.group(1)+' '+f[:120]; break
    c[key]+=1
for k,v in c.most_common(int(sys.argv[2])): print(f"{100*v/n:5.2f}% {k}")
