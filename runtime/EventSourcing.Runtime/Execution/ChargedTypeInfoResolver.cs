using System.Text.Json;
using System.Text.Json.Serialization.Metadata;

namespace EventSourcing.Runtime.Execution;

/// <summary>
/// The serializer's metadata resolver of one tenant assembly, charging what it builds inside calls (issue 22 red team,
/// escape-corpus/memory-late-converter.cs). Preparing a runner builds the metadata of every type reachable from the state
/// type and charges it (AssemblyRegistry.GetRunner), but a value typed <c>object</c> (or <c>Event.DataAs&lt;T&gt;</c>, or a
/// converter serializing with the options it is handed) reaches types no preparation saw: their metadata, and the
/// [JsonConverter] instances created for them (whose constructors may fill readonly fields), were built inside a call and
/// kept by the options for the life of the assembly, charged to nobody (a 20 Mi-character converter per type: +40 MiB per
/// type, past any cap). Now what a resolution allocates is charged to the tenant when the options keep it; over the cap it
/// throws TENANT_MEMORY_EXCEEDED instead, and nothing of it is kept (the options cache only what the resolver returned).
/// </summary>
public sealed class ChargedTypeInfoResolver(IJsonTypeInfoResolver inner) : IJsonTypeInfoResolver
{
    int _depth;

    /// <summary>Charges the bytes, or returns why not (set once the assembly is loaded). Null: not charged here (the
    /// caller measures: loading, preparing a runner).</summary>
    public Func<long, Exception?>? Charge { get; set; }

    /// <summary>Set while a runner is prepared: GetRunner measures and charges the whole preparation itself.</summary>
    public bool Suspended { get; set; }

    public JsonTypeInfo? GetTypeInfo(Type type, JsonSerializerOptions options)
    {
        // Nested resolutions are inside the outer one's measurement.
        var charge = _depth == 0 && !Suspended ? Charge : null;
        var before = charge is null ? 0 : TenantMemory.Allocated();
        _depth++;
        JsonTypeInfo? info;
        try
        {
            info = inner.GetTypeInfo(type, options);
        }
        finally
        {
            _depth--;
        }
        if (charge?.Invoke(TenantMemory.Allocated() - before) is { } refusal) throw refusal;
        return info;
    }
}
