using System.Buffers;
using System.Collections;
using System.Reflection;
using System.Runtime.CompilerServices;

namespace EventSourcing.Runtime.Execution;

/// <summary>
/// Issue 22's second wall: nothing one tenant's call leaves in a process-wide array pool is readable by the next tenant's
/// call. The framework rents scratch arrays from <c>ArrayPool&lt;T&gt;.Shared</c> (interpolated strings, JSON escaping,
/// string.Join, LINQ's ToArray, Regex.Replace, ...) and mostly returns them uncleared; a door that hands a tenant such an
/// array (a Decoder override, a TryFormat destination) then shows it what the previous tenant's call left there. The
/// AssemblyVerifier's allowlist closes the doors; this clears the rooms.
///
/// <para>Mechanism: every call that works on a tenant's data first says whose it is (<see cref="Enter"/>, with the
/// tenant the assembly was loaded for). When that differs from the previous call's tenant, before anything of the new
/// call runs (the host's own deserialization included: it rents too), the arrays the shared pools hold are cleared in
/// place: this thread's per-thread slot of each size bucket and every per-core partition (under the partition's own
/// lock, the one Rent/Return take). Cleared, not dropped: a dropped array is re-allocated by the pool with
/// <c>GC.AllocateUninitializedArray</c>, whose memory may hold stale heap words. Consecutive calls of one tenant cost a
/// string comparison.</para>
///
/// <para>Bound: a hostile tenant could fill the pools (32 arrays per bucket and core) to make every later switch slow.
/// Arrays are kept, smallest buckets first, while their total is within <see cref="RetainBytes"/>; the rest are cleared
/// and then dropped, so each byte above the bound is cleared once.</para>
///
/// <para>What this does not cover (the allowlist is the first wall): element types not in <see cref="ElementTypes"/>
/// (tenant-defined types' pools are reachable only by that tenant); pools other than <c>ArrayPool&lt;T&gt;.Shared</c>
/// (<c>ArrayPool.Create()</c> instances are private to their creator; <c>MemoryPool&lt;T&gt;.Shared</c> rents from the
/// shared array pool and is covered); memory that is not pooled (arrays the GC hands out uninitialized, stale stack in
/// CoreLib's <c>stackalloc</c> scratch, which is compiled with SkipLocalsInit); the metadata rows of the request's
/// JsonDocument (token positions and lengths, no content; System.Text.Json returns them uncleared on purpose). Other
/// threads' per-thread slots are dropped, not cleared (clearing could race with that thread's Rent); tenant code runs
/// only on the dispatching thread (finalizers are refused), so they hold tenant data only in tests that switch threads.</para>
/// </summary>
public static class PoolHygiene
{
    /// <summary>The element types whose shared pools are walked: those the framework rents for text, bytes and the
    /// value-type buffers of LINQ, sorting and splitting (value types come back uncleared), and the reference types
    /// (a stale reference would hand over the object itself).</summary>
    public static readonly Type[] ElementTypes =
    [
        typeof(byte), typeof(sbyte), typeof(char), typeof(short), typeof(ushort), typeof(int), typeof(uint), typeof(long), typeof(ulong),
        typeof(nint), typeof(nuint), typeof(float), typeof(double), typeof(decimal), typeof(Half), typeof(bool), typeof(Int128), typeof(UInt128),
        typeof(Guid), typeof(DateTime), typeof(DateTimeOffset), typeof(TimeSpan), typeof(DateOnly), typeof(TimeOnly), typeof(Range),
        typeof(System.Numerics.BigInteger), typeof(System.Text.Rune), typeof(object), typeof(string), typeof(ReadOnlyMemory<char>),
        typeof(ReadOnlyMemory<byte>), typeof(KeyValuePair<string, string>), typeof(KeyValuePair<string, object>),
    ];

    /// <summary>Bytes of cleared arrays kept in the pools after a switch (the rest are cleared and dropped): bounds what every
    /// later switch clears again. 128 KiB keeps what an apply call's own work rents (JSON escaping, a request's JsonDocument
    /// rows) and drops the big arrays a compile or a load leaves. Settable in-process for the benchmark only.</summary>
    public static long RetainBytes { get; set; } = DefaultRetainBytes;

    public const long DefaultRetainBytes = 128 << 10;

    static readonly object Gate = new();
    static readonly PoolWalker[] Walkers;
    static string? _domain;
    static int _thread;
    static bool _otherThreadsDirty;

    [ThreadStatic] static Array[]? t_ownSlots;

    /// <summary>This thread's slot arrays of every walked pool (they never change once made).</summary>
    static Array[] OwnSlots()
    {
        if (t_ownSlots is { } cached) return cached;
        // Not TlsSlot[][]: storing the runtime's arrays there would fail the array covariance check.
        var own = new Array[Walkers.Length];
        for (var w = 0; w < Walkers.Length; w++) own[w] = Walkers[w].OwnSlots();
        return t_ownSlots = own;
    }

    /// <summary>A domain no tenant has: work not attributed to a tenant (compile in all mode) makes the next tenant call clear.</summary>
    const string Unattributed = "\0unattributed";

    static PoolHygiene()
    {
        Walkers = ElementTypes.Select(t => new PoolWalker(t)).ToArray();
    }

    /// <summary>Off only for the benchmark's and the test's baselines (in-process; no setting reaches it in production).</summary>
    public static bool Enabled { get; set; } = true;

    public static long Switches { get; private set; }
    public static long ClearedArrays { get; private set; }
    public static long ClearedBytes { get; private set; }
    public static long DroppedArrays { get; private set; }

    /// <summary>The hygiene domain of a loaded assembly: its tenant when the caller named one at load, else the assembly alone
    /// (two assemblies of one unnamed tenant then count as two tenants: more clearing, never less).</summary>
    public static string DomainOf(string? tenant, string assemblyId) => tenant is not null ? "t:" + tenant : "a:" + assemblyId;

    /// <summary>Called before any work on <paramref name="domain"/>'s data or code: clears the shared pools if the previous
    /// call was another domain's.</summary>
    public static void Enter(string domain)
    {
        lock (Gate)
        {
            var thread = Environment.CurrentManagedThreadId;
            if (thread != _thread)
            {
                if (_thread != 0) _otherThreadsDirty = true; // the previous thread's slots may hold the previous domain's arrays
                _thread = thread;
            }
            if (string.Equals(domain, _domain, StringComparison.Ordinal)) return;
            if (Enabled && _domain is not null) Scrub();
            _domain = domain;
        }
    }

    /// <summary>Work that is no tenant's call but handles a tenant's data (compile): the next tenant call clears first.</summary>
    public static void EnterUnattributed() => Enter(Unattributed);

    /// <summary>Clears the shared pools now (whatever the domain).</summary>
    public static void Scrub()
    {
        lock (Gate)
        {
            Switches++;
            if (_otherThreadsDirty)
            {
                foreach (var walker in Walkers) DroppedArrays += walker.DropOtherThreadsSlots();
                _otherThreadsDirty = false;
            }
            var budget = RetainBytes;
            var own = OwnSlots();
            var held = new uint[Walkers.Length];
            var all = 0u;
            for (var w = 0; w < Walkers.Length; w++) all |= held[w] = Walkers[w].Held(own[w]);
            // Smallest buckets first across all types: what the budget keeps are the many small arrays.
            for (var bucket = 0; all >> bucket != 0; bucket++)
            {
                if ((all & (1u << bucket)) == 0) continue;
                for (var w = 0; w < Walkers.Length; w++)
                {
                    if ((held[w] & (1u << bucket)) == 0) continue;
                    var (cleared, bytes, dropped) = Walkers[w].ScrubBucket(bucket, own[w], ref budget);
                    ClearedArrays += cleared;
                    ClearedBytes += bytes;
                    DroppedArrays += dropped;
                }
            }
        }
    }

    /// <summary>What the shared pools hold now, by element type and bucket (this thread's slots and the partitions):
    /// for the benchmark and for tests' messages.</summary>
    public static List<(string Pool, int Bucket, int Arrays, long Bytes)> Census()
    {
        lock (Gate)
        {
            var census = new List<(string, int, int, long)>();
            foreach (var walker in Walkers)
                for (var bucket = 0; bucket < PoolWalker.BucketCount; bucket++)
                    if (walker.Count(bucket) is { Arrays: > 0 } c) census.Add((walker.ToString(), bucket, c.Arrays, c.Bytes));
            return census;
        }
    }

    /// <summary>
    /// Start-up check that the pool internals are where this class expects them in the running runtime (they are private
    /// and may move in another version): fails loudly rather than skipping the hygiene. Plants arrays in this thread's slot
    /// and in a partition of the byte and char pools and checks that a scrub clears them.
    /// </summary>
    public static void SelfTest()
    {
        lock (Gate)
        {
            foreach (var walker in Walkers) walker.CheckResolved();
            Check(ArrayPool<byte>.Shared, (byte)0xA5);
            Check(ArrayPool<char>.Shared, 'Z');
            Check(ArrayPool<object>.Shared, Gate);
        }

        static void Check<T>(ArrayPool<T> pool, T value)
        {
            // The first array returned lands in this thread's slot; the second displaces it into a partition.
            var first = pool.Rent(4096);
            var second = pool.Rent(4096);
            Array.Fill(first, value);
            Array.Fill(second, value);
            pool.Return(first);
            pool.Return(second);
            Scrub();
            if (Array.IndexOf(first, value) >= 0 || Array.IndexOf(second, value) >= 0)
                throw new InvalidOperationException($"pool hygiene self-test failed: ArrayPool<{typeof(T).Name}>.Shared kept a planted array uncleared " +
                                                    $"(runtime {Environment.Version}); the pool's internals changed");
        }
    }
}

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
