using System.Diagnostics.CodeAnalysis;

namespace Snapper.Scheduling;

/// <summary>
/// A map from <see cref="long"/> keys (tids, bids) that keeps one entry in its own fields and the others in a dictionary
/// made only when a second entry arrives. Meant as a mutable field of the object that owns it (never copied, never
/// readonly), under that object's lock.
/// </summary>
/// <remarks>
/// An actor's schedule holds, most of the time, one sub-batch of one PACT, and with many actors each is touched rarely
/// enough that its memory has left the processor's caches: a dictionary there costs three cold cache lines (itself, its
/// buckets, its entries) before the first lookup, where an entry kept inline shares the lines of the schedule that is
/// being touched anyway. Invariant: a key is held in at most one place, inline or in the dictionary, so
/// <see cref="Count"/> and enumeration see every entry once; <see cref="Set"/> keeps it by writing to whichever place
/// already holds the key, and uses the inline place only for a key the dictionary does not hold.
/// </remarks>
internal struct InlineFirstMap<TValue>
    where TValue : class
{
    private long _key;
    private TValue? _value; // null: the inline place is free
    private Dictionary<long, TValue>? _more;

    public readonly int Count => (_value is null ? 0 : 1) + (_more?.Count ?? 0);

    public readonly bool TryGetValue(long key, [MaybeNullWhen(false)] out TValue value)
    {
        if (_value is not null && _key == key)
        {
            value = _value;
            return true;
        }

        if (_more is not null)
        {
            return _more.TryGetValue(key, out value);
        }

        value = null;
        return false;
    }

    public readonly bool ContainsKey(long key) => TryGetValue(key, out _);

    /// <summary>The value of <paramref name="key"/>, which must be present.</summary>
    public readonly TValue this[long key] => TryGetValue(key, out var value) ? value : throw new KeyNotFoundException($"No entry for {key}.");

    /// <summary>Adds <paramref name="key"/>, or replaces its value.</summary>
    public void Set(long key, TValue value)
    {
        ArgumentNullException.ThrowIfNull(value);
        if (_value is not null && _key == key)
        {
            _value = value;
        }
        else if (_value is null && (_more is null || !_more.ContainsKey(key)))
        {
            _key = key;
            _value = value;
        }
        else
        {
            (_more ??= new Dictionary<long, TValue>())[key] = value;
        }
    }

    public bool Remove(long key) => Remove(key, out _);

    public bool Remove(long key, [MaybeNullWhen(false)] out TValue value)
    {
        if (_value is not null && _key == key)
        {
            value = _value;
            _value = null;
            return true;
        }

        if (_more is not null)
        {
            return _more.Remove(key, out value);
        }

        value = null;
        return false;
    }

    /// <summary>The values, the inline one first; the map must not change while they are enumerated.</summary>
    public readonly Values Entries => new(_value, _more);

    /// <summary>The values of a map, enumerated without allocating (<see cref="IEnumerable{T}"/> only for the rare LINQ use).</summary>
    internal readonly struct Values(TValue? first, Dictionary<long, TValue>? more) : IEnumerable<TValue>
    {
        public Enumerator GetEnumerator() => new(first, more);

        IEnumerator<TValue> IEnumerable<TValue>.GetEnumerator() => Enumerate().GetEnumerator();

        System.Collections.IEnumerator System.Collections.IEnumerable.GetEnumerator() => Enumerate().GetEnumerator();

        private IEnumerable<TValue> Enumerate()
        {
            foreach (var value in this)
            {
                yield return value;
            }
        }
    }

    internal struct Enumerator(TValue? first, Dictionary<long, TValue>? more)
    {
        private bool _firstDone = first is null;
        private Dictionary<long, TValue>.ValueCollection.Enumerator _rest = more?.Values.GetEnumerator() ?? default;
        private readonly bool _hasRest = more is not null;

        public TValue Current { get; private set; } = null!;

        public bool MoveNext()
        {
            if (!_firstDone)
            {
                _firstDone = true;
                Current = first!;
                return true;
            }

            if (_hasRest && _rest.MoveNext())
            {
                Current = _rest.Current;
                return true;
            }

            return false;
        }
    }
}
