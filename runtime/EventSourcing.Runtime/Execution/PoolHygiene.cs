using System.Buffers;

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
    public static long RetainBytes { get; internal set; } = DefaultRetainBytes;

    public const long DefaultRetainBytes = 128 << 10;

    // Process-wide on purpose: what this guards, ArrayPool<T>.Shared, is one per process, so whose data it may hold (the
    // last domain), on which thread, and the counters (stats.poolScrubs) are too. None of it is tenant data: the domain is
    // a tenant or assembly id, and tenant code cannot reach this assembly (AssemblyVerifier.AllowedAssemblyReferences).
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
    public static bool Enabled { get; internal set; } = true;

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
