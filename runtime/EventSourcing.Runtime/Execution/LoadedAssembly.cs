using System.Reflection;
using System.Text.Encodings.Web;
using System.Text.Json;

namespace EventSourcing.Runtime.Execution;

public sealed class LoadedAssembly
{
    internal LoadedAssembly(string id, TenantLoadContext context, Assembly assembly, byte[] image, byte[] sha256, string tenantId, long capBytes, string hygieneDomain)
    {
        Id = id;
        HygieneDomain = hygieneDomain;
        TenantId = tenantId;
        CapBytes = capBytes;
        Context = context;
        Assembly = assembly;
        Sha256 = sha256;
        Image = image;
        UsesNodaTime = assembly.GetReferencedAssemblies().Any(n => n.Name == "NodaTime");
        UsesJson = assembly.GetReferencedAssemblies().Any(n => n.Name == "System.Text.Json");
        // One options instance per assembly: the serializer caches type metadata per options instance, and a
        // shared instance would keep unloaded tenant types alive.
        Options = new JsonSerializerOptions(JsonSerializerDefaults.Web)
        {
            Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping, // the output is JSON for JSON consumers, not HTML
            TypeInfoResolver = Resolver,
        };
    }

    /// <summary>Charges the metadata the serializer builds inside calls (types no preparation reached).</summary>
    public ChargedTypeInfoResolver Resolver { get; } = new(new System.Text.Json.Serialization.Metadata.DefaultJsonTypeInfoResolver());

    public string Id { get; }
    /// <summary>Whose memory it is (TenantMemory), and that tenant's cap as its load gave it.</summary>
    public string TenantId { get; }
    public long CapBytes { get; }
    /// <summary>Whose calls these are, for <see cref="PoolHygiene"/>: the tenant named at load, else the assembly itself.</summary>
    public string HygieneDomain { get; }
    /// <summary>What it is charged: its image, its type initialisers' and its runners' allocations.</summary>
    public long ChargedBytes { get; internal set; }
    internal TenantLoadContext Context { get; }
    public Assembly Assembly { get; }
    public byte[] Sha256 { get; }
    /// <summary>Its image, kept to load it again when a call poisoned it (AssemblyRegistry.Enter); already charged.</summary>
    internal byte[] Image { get; }
    /// <summary>A call of it saw a type initialiser fail: loaded again before its next call (AssemblyRegistry.Enter).</summary>
    internal bool Poisoned { get; set; }
    /// <summary>Whether it references NodaTime: only such code can fill NodaTime's pattern caches (<see cref="NodaTimeCaches"/>).</summary>
    public bool UsesNodaTime { get; }
    /// <summary>Whether it references System.Text.Json: only such code can fill the serializer's shared caches (<see cref="JsonSharedCaches"/>).</summary>
    public bool UsesJson { get; }
    public JsonSerializerOptions Options { get; }
    /// <summary>The Regex instances its statics keep: their runners are dropped after each of its calls (<see cref="KeptRegexRunners"/>).</summary>
    internal System.Text.RegularExpressions.Regex[] KeptRegexes { get; init; } = [];
    internal Dictionary<string, IRunner> Runners { get; } = new(StringComparer.Ordinal);
}
