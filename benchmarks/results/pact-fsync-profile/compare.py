"""Microseconds of CPU per transaction, by function, in two `perf script` dumps of the runner (A and B), and their difference.

Each dump is 15 s of samples at 499 Hz (`perf record -F 499 -g -p PID -- sleep 15`, see ../pact-profile/README.md), so a
function's samples / 15 / 499 / (txn/s of its run) is the CPU it took per transaction.

Usage: python3 compare.py VIEW THREADS A.txt A_TXN_PER_S B.txt B_TXN_PER_S [TOP]
  VIEW     inclusive   every function on the stack (each counted once per sample)
           nearest     the innermost Snapper frame on the stack (../pact-profile/perf_shares.py's grouping)
           outside     samples with no Snapper frame, by their innermost managed frame
  THREADS  the start of the thread name to keep: '.NET' (the thread pool's workers), 'Snapper' (the logger), '' (all)
With B given as '-' only A is printed.
"""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pact-profile'))
from perf_shares import function_name, key_of  # noqa: E402

MANAGED = re.compile(r'\[(Snapper[^\]]*|Orleans[^\]]*|System[^\]]*|Microsoft[^\]]*)\] ')
SECONDS, HERTZ = 15, 499


def name_of(frame):
    return function_name(frame) if MANAGED.search(frame) else re.sub(r'^\S+ ', '', frame)[:100]


def keys_of(frames, view):
    if view == 'inclusive':
        return set(name_of(f) for f in frames)
    if view == 'nearest':
        return {key_of(frames, 'nearest', None)}
    if any(re.search(r'\[Snapper[^\]]*\] ', f) for f in frames):
        return set()
    return {next((name_of(f) for f in frames if MANAGED.search(f)), '(native only) ' + name_of(frames[0]))}


def load(path, view, threads):
    counts, total = collections.Counter(), 0
    for block in open(path).read().split('\n\n'):
        lines = [line.strip() for line in block.split('\n') if line.strip()]
        if len(lines) < 2 or not lines[0].startswith(threads):
            continue
        total += 1
        for key in keys_of(lines[1:], view):
            counts[key] += 1
    return counts, total


def main():
    view, threads, path_a, rate_a, path_b, rate_b = sys.argv[1:7]
    top = int(sys.argv[7]) if len(sys.argv) > 7 else 40
    us_a = lambda n: n / SECONDS / HERTZ * 1e6 / float(rate_a)
    a, total_a = load(path_a, view, threads)
    if path_b == '-':
        print(f"all samples {us_a(total_a):.1f} us per txn")
        for key, n in a.most_common(top):
            print(f"{us_a(n):7.2f}  {key}")
        return
    us_b = lambda n: n / SECONDS / HERTZ * 1e6 / float(rate_b)
    b, total_b = load(path_b, view, threads)
    print(f"all samples: A {us_a(total_a):.1f}, B {us_b(total_b):.1f} us per txn\n      A       B   A - B")
    for key in sorted(set(a) | set(b), key=lambda k: -abs(us_a(a[k]) - us_b(b[k])))[:top]:
        print(f"{us_a(a[key]):7.2f} {us_b(b[key]):7.2f} {us_a(a[key]) - us_b(b[key]):+7.2f}  {key}")


if __name__ == '__main__':
    main()
