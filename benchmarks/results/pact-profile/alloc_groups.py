"""Groups the first table ("== by type") of a Snapper.AllocationProfile report into what a PACT allocates for.

Usage: python3 alloc_groups.py REPORT KB_PER_TXN   (the report made with a large top, e.g. `report FILE Snapper 200`)
"""
import re
import sys

GROUPS = [
    ('Orleans', r'^Orleans|OrleansCodeGen|CallbackData|Node\[System.ValueTuple`2\[Orleans|Response`1|Invokable|Proxy_'),
    ('tasks', r'Task|AsyncStateMachineBox|System.Action$|Continuation|Promise|QueueUserWorkItem|ValueTaskSourceAsTask'),
    ('batch', r'SubBatch|PactSlot|PactBatch|ActorSchedule|Int64\[\]|GrainId\[\]|PendingPact|PactTicket|SortedSet'
              r'|KeyValuePair`2\[System.Int64,Snapper.Pact|Node\[System.Int64|Int32\[\]'),
    ('api', r'RuntimeMethodInfoStub|Func`3\[Snapper.TxnContext|CallRequest|TxnContext|Entry\[Orleans.Runtime.GrainId,System.Int32\]'
            r'|Dictionary`2\[Orleans.Runtime.GrainId,System.Int32\]|ActorAccessInfo|KeyCollection\[Orleans|TxnRequest|TxnResponse|TxnMode'),
]


def group_of(type_name):
    for name, pattern in GROUPS:
        # A state machine box names the method it runs (possibly Orleans'), so boxes count as tasks, not as Orleans.
        if re.search(pattern, type_name) and not (name == 'Orleans' and 'AsyncStateMachineBox' in type_name):
            return name
    return 'other'


def main():
    text = open(sys.argv[1]).read()
    table = text.split('== by type\n', 1)[1].split('\n==', 1)[0]
    per_txn = float(sys.argv[2])
    shares = {}
    for line in table.splitlines():
        found = re.match(r'\s*([\d.]+)%\s+(.*)', line)
        if found:
            group = group_of(found.group(2))
            shares[group] = shares.get(group, 0.0) + float(found.group(1))
    for group, share in sorted(shares.items(), key=lambda kv: -kv[1]):
        print(f"{share:6.2f}%  {share * per_txn / 100:5.2f} KB  {group}")


if __name__ == '__main__':
    main()
