using System.Buffers;
using System.Collections;
using System.Reflection;
using System.Runtime.CompilerServices;

namespace EventSourcing.Runtime.Execution;

/// <summary>Reads and clears one <c>SharedArrayPool&lt;T&gt;</c> through its private fields (resolved once, by reflection:
/// the host is trusted code). The references these fields hold never change once set, so they are cached.</summary>
sealed class PoolWalker
{
    /// <summary>The pool's number of size buckets (16 elements to 2^30).</summary>
    public const int BucketCount = 27;

    const BindingFlags Any = BindingFlags.Instance | BindingFlags.Static | BindingFlags.NonPublic | BindingFlags.Public;

    static readonly Type? PartitionsType = typeof(object).Assembly.GetType("System.Buffers.SharedArrayPoolPartitions");
    static readonly FieldInfo? PartitionsField = PartitionsType?.GetField("_partitions", Any);
    static readonly Type? PartitionType = PartitionsType?.GetNestedType("Partition", Any);
    static readonly FieldInfo? ArraysField = PartitionType?.GetField("_arrays", Any);
    static readonly FieldInfo? CountField = PartitionType?.GetField("_count", Any);
    static readonly Type? SlotType = typeof(object).Assembly.GetType("System.Buffers.SharedArrayPoolThreadLocalArray");

    readonly Type _element;
    readonly object _pool;
    readonly long _elementSize;
    readonly object?[]? _buckets;
    readonly FieldInfo? _tlsField;
    readonly IEnumerable? _allTls;
    readonly object[]?[] _partitions = new object[]?[BucketCount];
    readonly Array?[]?[]?[] _arrays = new Array?[]?[]?[BucketCount]; // bucket → partition → its slots

    public PoolWalker(Type element)
    {
        _element = element;
        _pool = typeof(ArrayPool<>).MakeGenericType(element).GetProperty("Shared")!.GetValue(null)!;
        _elementSize = element.IsValueType ? RuntimeHelpers.SizeOf(element.TypeHandle) : IntPtr.Size;
        var poolType = _pool.GetType();
        _buckets = poolType.GetField("_buckets", Any)?.GetValue(_pool) as object?[];
        _tlsField = poolType.GetField("t_tlsBuckets", Any);
        _allTls = poolType.GetField("_allTlsBuckets", Any)?.GetValue(_pool) as IEnumerable;
    }

    public void CheckResolved()
    {
        var missing = new List<string>();
        if (_pool.GetType().Name != "SharedArrayPool`1") missing.Add($"ArrayPool<{_element.Name}>.Shared is a {_pool.GetType()}");
        if (_buckets is null || _buckets.Length != BucketCount) missing.Add("SharedArrayPool<T>._buckets[27]");
        if (_tlsField is null || !_tlsField.IsDefined(typeof(ThreadStaticAttribute))) missing.Add("SharedArrayPool<T>.t_tlsBuckets");
        if (_allTls is null) missing.Add("SharedArrayPool<T>._allTlsBuckets");
        if (PartitionsField is null) missing.Add("SharedArrayPoolPartitions._partitions");
        if (ArraysField is null || ArraysField.FieldType != typeof(Array[])) missing.Add("Partition._arrays");
        if (CountField is null || CountField.FieldType != typeof(int)) missing.Add("Partition._count");
        if (SlotType is null || RuntimeHelpers.SizeOf(SlotType.TypeHandle) != Unsafe.SizeOf<TlsSlot>()
            || SlotType.GetField("Array", Any)?.FieldType != typeof(Array))
            missing.Add("SharedArrayPoolThreadLocalArray {Array, int}");
        if (missing.Count > 0)
            throw new InvalidOperationException($"pool hygiene cannot walk ArrayPool<{_element.Name}>.Shared in runtime {Environment.Version}: " +
                                                "not found: " + string.Join(", ", missing));
    }

    /// <summary>This thread's per-bucket slots (null until the thread first returns an array of this type).</summary>
    public Array OwnSlots()
    {
        if (_tlsField!.GetValue(null) is not Array array)
        {
            // This thread has no slots in this pool yet: a Return makes them (and they never change), so that every later
            // scrub finds them without reflection.
            ReturnOne();
            array = (Array)_tlsField.GetValue(null)!;
        }
        return array;
    }

    void ReturnOne() => ((Action)Delegate.CreateDelegate(typeof(Action), typeof(PoolWalker).GetMethod(nameof(RentReturn), BindingFlags.Static | BindingFlags.NonPublic)!
        .MakeGenericMethod(_element)))();

    static void RentReturn<T>() => ArrayPool<T>.Shared.Return(ArrayPool<T>.Shared.Rent(1));

    /// <summary>The runtime's <c>SharedArrayPoolThreadLocalArray[]</c> seen as TlsSlot[]: the same fields {Array? Array; int
    /// MillisecondsTimeStamp}; CheckResolved checks the size, the self-test finds planted arrays through it.</summary>
    static TlsSlot[] Slots(Array runtimeSlots) => Unsafe.As<TlsSlot[]>(runtimeSlots);

    /// <summary>The buckets (bit i for bucket i) where this thread's slot or a partition holds an array now: most pools hold
    /// nothing in most buckets, and a scrub visits only these. (An array returned after this look is no different from
    /// one returned after the scrub.)</summary>
    public uint Held(Array ownSlots)
    {
        var held = 0u;
        var slots = Slots(ownSlots);
        for (var b = 0; b < slots.Length && b < BucketCount; b++)
            if (slots[b].Array is not null) held |= 1u << b;
        var buckets = _buckets!;
        for (var b = 0; b < BucketCount; b++)
        {
            if (buckets[b] is null || Partitions(b) is not { } partitions) continue;
            var arraysOf = _arrays[b]!;
            for (var p = 0; p < partitions.Length; p++)
            {
                var arrays = arraysOf[p] ??= (Array?[])ArraysField!.GetValue(partitions[p])!;
                // A stack filled from slot 0: it holds something if slot 0 does.
                if (Volatile.Read(ref arrays[0]) is not null) held |= 1u << b;
            }
        }
        return held;
    }

    /// <summary>Clears the arrays of one size bucket (this thread's slot, then each partition); keeps them while the budget lasts.</summary>
    public (int Cleared, long Bytes, int Dropped) ScrubBucket(int bucket, Array ownSlots, ref long budget)
    {
        int cleared = 0, dropped = 0;
        long bytes = 0;
        if (Slots(ownSlots)[bucket].Array is { } own)
        {
            var slots = Slots(ownSlots);
            var size = own.LongLength * _elementSize;
            Array.Clear(own);
            cleared++;
            bytes += size;
            // Trim (on the finalizer thread) may take the array out concurrently: it only drops it.
            if (size <= budget) budget -= size;
            else if (Interlocked.CompareExchange(ref slots[bucket].Array, null, own) == own) dropped++;
        }

        var partitions = Partitions(bucket);
        if (partitions is null) return (cleared, bytes, dropped);
        var arraysOf = _arrays[bucket]!;
        for (var p = 0; p < partitions.Length; p++)
        {
            var partition = partitions[p];
            var arrays = arraysOf[p] ??= (Array?[])ArraysField!.GetValue(partition)!;
            // A stack filled from slot 0: empty now if slot 0 is. (A Return right after this read is no different from one
            // right after the lock below is released.)
            if (Volatile.Read(ref arrays[0]) is null) continue;
            lock (partition) // Rent and Return hold it while they pop and push
            {
                // The partition is a stack: arrays[0.._count) are set, the rest null. Kept arrays move down in order.
                int kept = 0, gone = 0;
                for (var i = 0; i < arrays.Length; i++)
                {
                    if (arrays[i] is not { } array) continue;
                    var size = array.LongLength * _elementSize;
                    Array.Clear(array);
                    cleared++;
                    bytes += size;
                    arrays[i] = null;
                    if (size <= budget)
                    {
                        budget -= size;
                        arrays[kept++] = array;
                    }
                    else gone++;
                }
                if (gone > 0) CountField!.SetValue(partition, kept);
                dropped += gone;
            }
        }
        return (cleared, bytes, dropped);
    }

    public (int Arrays, long Bytes) Count(int bucket)
    {
        int arrays = 0;
        long bytes = 0;
        if (Slots(OwnSlots())[bucket].Array is { } mine) (arrays, bytes) = (1, mine.LongLength * _elementSize);
        if (Partitions(bucket) is not { } partitions) return (arrays, bytes);
        for (var p = 0; p < partitions.Length; p++)
        {
            var slots = _arrays[bucket]![p] ??= (Array?[])ArraysField!.GetValue(partitions[p])!;
            lock (partitions[p])
            {
                foreach (var a in slots)
                    if (a is not null) (arrays, bytes) = (arrays + 1, bytes + a.LongLength * _elementSize);
            }
        }
        return (arrays, bytes);
    }

    object[]? Partitions(int bucket)
    {
        var cached = _partitions[bucket];
        if (cached is not null) return cached;
        if (_buckets![bucket] is not { } perCore) return null; // created on the first Return of that size
        var partitions = (object[])PartitionsField!.GetValue(perCore)!;
        _arrays[bucket] = new Array?[]?[partitions.Length];
        _partitions[bucket] = partitions;
        return partitions;
    }

    /// <summary>Drops (does not clear: that thread may be inside Rent with the array in hand) the arrays in other threads' slots.</summary>
    public int DropOtherThreadsSlots()
    {
        var own = OwnSlots();
        var dropped = 0;
        var others = new List<Array>();
        foreach (var entry in _allTls!)
        {
            // KeyValuePair<SharedArrayPoolThreadLocalArray[], object?>, boxed: rare path (only after the dispatching thread changed).
            var key = entry.GetType().GetProperty("Key")!.GetValue(entry);
            if (key is Array array && !ReferenceEquals(array, own)) others.Add(array);
        }
        foreach (var other in others)
        {
            var slots = Slots(other);
            for (var i = 0; i < slots.Length; i++)
                if (Interlocked.Exchange(ref slots[i].Array, null) is not null) dropped++;
        }
        return dropped;
    }

    /// <summary>Mirror of the runtime's <c>SharedArrayPoolThreadLocalArray</c> (checked in <see cref="CheckResolved"/>).</summary>
    internal struct TlsSlot
    {
        public Array? Array;
        public int MillisecondsTimeStamp;
    }

    public override string ToString() => $"ArrayPool<{_element.Name}>";
}
