using System.Reflection;
using System.Text.Json;

namespace EventSourcing.Runtime.Execution;

/// <summary>
/// System.Text.Json's process-wide metadata caches, emptied before every tenant call that follows a call of code referencing
/// System.Text.Json, and when an upload is unloaded (issue 28, sec-typeinit; the issue-27 red team's
/// escape-corpus/memory-json-default-options-metadata.cs and outlive-json-options-cache-pins-context.cs).
///
/// <para>The serializer caches each type's metadata in a "caching context" per options instance, and options with equal
/// settings share one context through a process-wide table (<c>JsonSerializerOptions.TrackedCachingContexts</c>, 64 weak
/// slots). <c>JsonSerializer.Serialize(value)</c> without options uses <c>JsonSerializerOptions.Default</c>, whose context
/// lives for the process; a tenant's <c>new JsonSerializerOptions()</c> finds that same context in the table. Tenant types
/// cached there were memory charged to nobody (~9 MiB for 150 types) and kept the tenant's collectible load context alive
/// after unload (one more unloading assembly per load/call/unload cycle). And a tenant's options equal to another
/// tenant's kept options (a static readonly JsonSerializerOptions) would join — and fill — that other upload's context.
/// Emptied here, what a call cached in a shared context is gone before the next call runs (transient, that call's own),
/// and no context outlives the call in the table, so no later call of anyone joins it. The uploads' own options
/// (LoadedAssembly.Options: their own resolver, so never equal to another's) keep their context and its charged metadata.</para>
///
/// <para>The cost: a call using option-less serialization rebuilds its types' metadata in each call (tens of microseconds
/// per type, its own time); the clearing itself is three dictionary clears and a 64-slot array clear, only after calls of
/// code that references System.Text.Json. Reflection over the serializer's internals (<c>JsonSerializerOptions.ClearCaches</c>,
/// the method the framework's hot-reload handler calls, and the table's array), checked at start by <see cref="SelfTest"/>:
/// a framework that moved them fails the exec host's start, never silently.</para>
/// </summary>
public static class JsonSharedCaches
{
    const BindingFlags Internal = BindingFlags.Instance | BindingFlags.NonPublic;

    // Process-wide on purpose: what this clears is the serializer's statics, one per process.
    static readonly Action<JsonSerializerOptions> ClearOptions;
    static readonly Array TrackedContexts;
    static readonly PropertyInfo CacheContext;
    static readonly PropertyInfo ContextCount;

    static JsonSharedCaches()
    {
        var options = typeof(JsonSerializerOptions);
        ClearOptions = (options.GetMethod("ClearCaches", Internal, Type.EmptyTypes)
                        ?? throw new InvalidOperationException("JsonSerializerOptions.ClearCaches not found"))
            .CreateDelegate<Action<JsonSerializerOptions>>();
        var tracked = options.GetNestedType("TrackedCachingContexts", BindingFlags.NonPublic)
                      ?? throw new InvalidOperationException("JsonSerializerOptions.TrackedCachingContexts not found");
        TrackedContexts = tracked.GetField("s_trackedContexts", BindingFlags.Static | BindingFlags.NonPublic)?.GetValue(null) as Array
                          ?? throw new InvalidOperationException("TrackedCachingContexts.s_trackedContexts not found");
        CacheContext = options.GetProperty("CacheContext", Internal) ?? throw new InvalidOperationException("JsonSerializerOptions.CacheContext not found");
        ContextCount = CacheContext.PropertyType.GetProperty("Count") ?? throw new InvalidOperationException("CachingContext.Count not found");
    }

    /// <summary>Whether code referencing System.Text.Json ran since the caches were last emptied: only it can have filled them.</summary>
    static bool s_used;

    /// <summary>Before a tenant call (or load) on the dispatching thread: empties the caches when code that may have filled
    /// them ran since, and remembers whether this call's code may.</summary>
    public static void BeforeCall(bool callerUsesJson)
    {
        if (s_used)
        {
            Clear();
            s_used = false;
        }
        if (callerUsesJson) s_used = true;
    }

    /// <summary>When an upload goes: what its last call cached in a shared context must not keep its load context alive.</summary>
    public static void AfterUnload()
    {
        if (!s_used) return;
        Clear();
        s_used = false;
    }

    /// <summary>Empties the shared options' contexts (Default, Web, Strict) and the table of equal-options contexts.</summary>
    public static void Clear()
    {
        ClearOptions(JsonSerializerOptions.Default);
        ClearOptions(JsonSerializerOptions.Web);
        ClearOptions(JsonSerializerOptions.Strict);
        Array.Clear(TrackedContexts);
    }

    /// <summary>Types cached now in <c>JsonSerializerOptions.Default</c>'s context.</summary>
    internal static int DefaultCount() => (int)ContextCount.GetValue(CacheContext.GetValue(JsonSerializerOptions.Default))!;

    /// <summary>Contexts the equal-options table holds now.</summary>
    internal static int TrackedCount()
    {
        var n = 0;
        foreach (var slot in TrackedContexts)
            if (slot is not null && IsAlive(slot)) n++;
        return n;
    }

    static bool IsAlive(object weak)
    {
        var tryGet = weak.GetType().GetMethod("TryGetTarget")!;
        var args = new object?[] { null };
        return (bool)tryGet.Invoke(weak, args)! && args[0] is not null;
    }

    /// <summary>Fails (InvalidOperationException) unless clearing works on this framework: a type serialized with the
    /// default options is cached, and gone after <see cref="Clear"/>; serializing works again afterwards.</summary>
    public static void SelfTest()
    {
        var probe = JsonSerializer.Serialize(new SelfTestValue { Value = 1 });
        if (DefaultCount() == 0) throw new InvalidOperationException("JsonSerializerOptions.Default's cache was not found holding a type");
        var equal = new JsonSerializerOptions();
        equal.MakeReadOnly(populateMissingResolver: true);
        _ = equal.GetTypeInfo(typeof(SelfTestValue)); // a context in the equal-options table
        if (TrackedCount() == 0) throw new InvalidOperationException("the serializer's table of caching contexts was not found holding one");
        Clear();
        if (DefaultCount() != 0 || TrackedCount() != 0) throw new InvalidOperationException("the serializer's shared caches were not cleared");
        if (JsonSerializer.Serialize(new SelfTestValue { Value = 1 }) != probe) throw new InvalidOperationException("the serializer does not work after its caches were cleared");
        Clear();
    }

    sealed class SelfTestValue
    {
        public int Value { get; set; }
    }
}
