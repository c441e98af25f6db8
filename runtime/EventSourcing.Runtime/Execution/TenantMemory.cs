using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Execution;

/// <summary>
/// The memory each tenant holds in this executor, charged when it comes to be held rather than when it happens to run
/// out: a tenant assembly is charged its image, what its type initialisers allocate (run eagerly at load, see
/// AssemblyRegistry) and what preparing its runners allocates (the serializer's metadata and the converters it creates and
/// keeps). Allocation, not retention, is charged: it is an upper bound of what can be retained, read from a per-thread
/// counter at no cost, where measuring retention needs a full blocking collection before and after every load. A tenant
/// over its cap (the sum over its assemblies here) is refused with TENANT_MEMORY_EXCEEDED, and the memory it was given
/// back by unloading its load context.
/// </summary>
public sealed class TenantMemory
{
    /// <summary>Cap when a load does not name one (the TypeScript side always does: RUNTIME_TENANT_MEMORY_MB).</summary>
    public const long DefaultCapBytes = 32L << 20;

    /// <summary>A heap this full after a full collection, at an OutOfMemoryException, is held by loaded code, not by the call.</summary>
    public const double HeldElsewhereFraction = 0.5;

    readonly Dictionary<string, long> _byTenant = new(StringComparer.Ordinal);

    public long Charged(string tenantId) => _byTenant.GetValueOrDefault(tenantId);

    public long Total => _byTenant.Values.Sum();

    public void Charge(string tenantId, long bytes) => _byTenant[tenantId] = Charged(tenantId) + bytes;

    public void Release(string tenantId, long bytes)
    {
        var left = Charged(tenantId) - bytes;
        if (left > 0) _byTenant[tenantId] = left;
        else _byTenant.Remove(tenantId);
    }

    /// <summary>Bytes allocated by this thread so far (the host serves requests on one thread).</summary>
    public static long Allocated() => GC.GetAllocatedBytesForCurrentThread();

    public static ProtocolException Exceeded(string tenantId, long held, long adding, long cap, string what) =>
        new(ErrorCodes.TenantMemoryExceeded,
            $"tenant '{tenantId}' would hold {Mib(held + adding)} in this executor ({what} {Mib(adding)}); the limit is {Mib(cap)} per tenant");

    /// <summary>
    /// After an OutOfMemoryException in a call, once the call's own frames are unwound (its transient objects unreachable):
    /// a full compacting collection, then whether what is still live fills at least <see cref="HeldElsewhereFraction"/> of
    /// the heap limit. If so, the memory is held by loaded code (some tenant's statics or converters), not by this call,
    /// which is then answered HOST_MEMORY_EXHAUSTED (the caller runs it again elsewhere) instead of failing.
    /// </summary>
    public static ProtocolException? HeldElsewhere(Exception ex)
    {
        // Only the runtime's own: tenant code may throw one itself, with an inner exception or Data holding what it allocated
        // (alive while judged), to pass its own memory off as someone else's.
        if ((ex.GetType() != typeof(OutOfMemoryException) && ex.GetType() != typeof(InsufficientMemoryException)) || ex.InnerException is not null || ex.Data.Count > 0) return null;
        GC.Collect(GC.MaxGeneration, GCCollectionMode.Forced, blocking: true, compacting: true);
        // Its message is alive through the judgement too, and tenant code chooses it: 140 MiB of message would be "half the
        // heap held by loaded code" and frame the tenant charged the most (issue 22 red team,
        // escape-corpus/memory-oom-message-frame.cs). The type is exactly the runtime's, so Message is not overridden.
        var live = GC.GetTotalMemory(false) - 2L * (ex.Message?.Length ?? 0);
        var limit = GC.GetGCMemoryInfo().TotalAvailableMemoryBytes;
        if (limit <= 0 || live < limit * HeldElsewhereFraction) return null;
        return new ProtocolException(ErrorCodes.HostMemoryExhausted,
            $"the executor ran out of memory during this call, but after a full collection {Mib(live)} of its {Mib(limit)} heap is still held by loaded code, not by this call");
    }

    /// <summary>
    /// Builds the serializer's metadata for the state type and every type reachable from it (properties, elements, keys,
    /// declared derived types; at most <see cref="MaxPreparedTypes"/>), so that the converters the serializer creates and
    /// keeps for the life of the assembly — a tenant [JsonConverter]'s constructor may build what it likes into its readonly
    /// fields — are created now, while their allocation is charged (AssemblyRegistry.GetRunner), not lazily inside some
    /// later serialization. A type the serializer cannot handle is left to fail where it fails today.
    /// </summary>
    public static void PrepareMetadata(JsonSerializerOptions options, Type root)
    {
        var seen = new HashSet<Type>();
        var pending = new Stack<Type>();
        pending.Push(root);
        while (pending.Count > 0 && seen.Count < MaxPreparedTypes)
        {
            var type = pending.Pop();
            if (!seen.Add(type)) continue;
            JsonTypeInfo info;
            try
            {
                info = options.GetTypeInfo(type);
            }
            catch (Exception ex) when (ex is not OutOfMemoryException)
            {
                continue;
            }
            foreach (var property in info.Properties) pending.Push(property.PropertyType);
            if (info.ElementType is { } element) pending.Push(element);
            if (info.KeyType is { } key) pending.Push(key);
            if (info.PolymorphismOptions is { } polymorphism)
                foreach (var derived in polymorphism.DerivedTypes) pending.Push(derived.DerivedType);
        }
    }

    public const int MaxPreparedTypes = 1000;

    static string Mib(long bytes) => $"{bytes / (1024.0 * 1024):0.#} MiB";
}
