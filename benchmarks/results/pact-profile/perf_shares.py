"""Shares of the samples of a `perf script` dump of a .NET process (JIT symbols from DOTNET_PerfMapEnabled).

Usage: perf script -i perf.data > perf.txt, then
  python3 perf_shares.py perf.txt assembly          by the assembly of the innermost managed frame, and whether the leaf
                                                    is JIT code, coreclr, libc or the kernel
  python3 perf_shares.py perf.txt nearest [top]     by the innermost Snapper frame on the stack (the Snapper operation
                                                    the time was spent under)
  python3 perf_shares.py perf.txt self PATTERN [top]  by function, for samples whose innermost managed frame matches PATTERN
"""
import collections
import re
import sys

MANAGED = re.compile(r'\[(Snapper[^\]]*|Orleans[^\]]*|System[^\]]*|Microsoft[^\]]*)\] ')


def stacks(path):
    for block in open(path).read().split('\n\n'):
        frames = [line.strip() for line in block.split('\n')[1:] if line.strip()]
        if frames:
            yield frames


def function_name(frame):
    name = re.sub(r'^\S+ ', '', frame)
    name = re.sub(r'\(/tmp.*', '', name)
    name = re.sub(r'\[OptimizedTier1\]|\[Optimized\]|\+0x[0-9a-f]+', '', name)
    return name[:170]


def key_of(frames, mode, pattern):
    if mode == 'assembly':
        owner = 'native'
        for frame in frames:
            found = MANAGED.search(frame)
            if found:
                owner = found.group(1) if found.group(1).startswith('Snapper') else found.group(1).split('.')[0]
                break
        leaf = frames[0]
        kind = 'coreclr' if 'libcoreclr' in leaf else 'kernel' if 'kernel' in leaf else 'libc' if 'libc' in leaf else 'jit'
        return (owner, kind)
    if mode == 'nearest':
        for frame in frames:
            found = re.search(r'\[(Snapper[^\]]*)\] (\S+)', frame)
            if found:
                return found.group(1) + ' ' + re.sub(r'\(.*', '', found.group(2))[:120]
        return '(none)'
    for frame in frames:
        if MANAGED.search(frame):
            return function_name(frame) if re.search(pattern, frame) else None
    return None


def main():
    path, mode = sys.argv[1], sys.argv[2]
    pattern = sys.argv[3] if mode == 'self' else None
    rest = sys.argv[4:] if mode == 'self' else sys.argv[3:]
    top = int(rest[0]) if rest else 30
    counts, total = collections.Counter(), 0
    for frames in stacks(path):
        total += 1
        key = key_of(frames, mode, pattern)
        if key is not None:
            counts[key] += 1
    if mode == 'self':
        print(f"total {100 * sum(counts.values()) / total:.1f}%")
    for key, count in counts.most_common(top):
        print(f"{100 * count / total:5.2f}% {key}")


if __name__ == '__main__':
    main()
