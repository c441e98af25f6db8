using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.Loader;
using System.Security.Cryptography;
using System.Text.Encodings.Web;
using System.Text.Json;
using EventSourcing.Runtime.Compilation;

namespace EventSourcing.Runtime.Execution;

/// <summary>A collectible load context holding exactly one tenant assembly. Its dependencies (the SDK and
/// framework assemblies) resolve to the host's copies, so IReducer&lt;T&gt; is the same type on both sides.</summary>
sealed class TenantLoadContext : AssemblyLoadContext
{
    public TenantLoadContext(string name) : base(name, isCollectible: true)
    {
    }

    protected override Assembly? Load(AssemblyName assemblyName) => null; // fall back to the default context

    protected override IntPtr LoadUnmanagedDll(string unmanagedDllName) =>
        throw new InvalidOperationException("native libraries cannot be loaded by tenant code");
}

public sealed class LoadedAssembly
{
    internal LoadedAssembly(string id, TenantLoadContext context, Assembly assembly, byte[] sha256, string? tenant = null)
    {
        Id = id;
        HygieneDomain = PoolHygiene.DomainOf(tenant, id);
        Context = context;
        Assembly = assembly;
        Sha256 = sha256;
        // One options instance per assembly: the serializer caches type metadata per options instance, and a
        // shared instance would keep unloaded tenant types alive.
        Options = new JsonSerializerOptions(JsonSerializerDefaults.Web)
        {
            Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping, // the output is JSON for JSON consumers, not HTML
            TypeInfoResolver = new System.Text.Json.Serialization.Metadata.DefaultJsonTypeInfoResolver(),
        };
    }

    public string Id { get; }
    internal TenantLoadContext Context { get; }
    public Assembly Assembly { get; }
    public byte[] Sha256 { get; }
    public JsonSerializerOptions Options { get; }

    /// <summary>Whose calls these are, for <see cref="PoolHygiene"/>: the tenant named at load, else the assembly itself.</summary>
    public string HygieneDomain { get; }
    internal Dictionary<string, IRunner> Runners { get; } = new(StringComparer.Ordinal);
}

/// <summary>Tenant assemblies loaded in this executor, by assemblyId.</summary>
public sealed class AssemblyRegistry
{
    readonly Dictionary<string, LoadedAssembly> _loaded = new(StringComparer.Ordinal);
    readonly List<WeakReference> _unloading = new();

    public int Count => _loaded.Count;

    /// <summary>Unloaded contexts not collected yet.</summary>
    public int UnloadingCount
    {
        get
        {
            _unloading.RemoveAll(w => !w.IsAlive);
            return _unloading.Count;
        }
    }

    /// <summary>Verifies (same policy as at compile time) and loads an assembly. Returns false when the same
    /// bytes are already loaded under this id.</summary>
    public bool Load(string assemblyId, byte[] image, string? tenant = null)
    {
        var sha = SHA256.HashData(image);
        if (_loaded.TryGetValue(assemblyId, out var existing))
        {
            if (existing.Sha256.AsSpan().SequenceEqual(sha)) return false;
            throw new ProtocolException(ErrorCodes.AlreadyLoaded, $"assembly '{assemblyId}' is already loaded with different contents; unload it first");
        }

        IReadOnlyList<Violation> violations;
        try
        {
            violations = AssemblyVerifier.Verify(image);
        }
        catch (BadImageFormatException ex)
        {
            throw new ProtocolException(ErrorCodes.VerifyFailed, "not a valid assembly: " + ex.Message);
        }
        if (violations.Count > 0)
            throw new ProtocolException(ErrorCodes.VerifyFailed,
                "the assembly fails the API policy: " + string.Join("; ", violations.Take(10).Select(v => v.Message)));

        var context = new TenantLoadContext("tenant:" + assemblyId);
        try
        {
            using var stream = new MemoryStream(image, writable: false);
            var assembly = context.LoadFromStream(stream);
            _loaded[assemblyId] = new LoadedAssembly(assemblyId, context, assembly, sha, tenant);
            return true;
        }
        catch (Exception ex) when (ex is BadImageFormatException or FileLoadException)
        {
            context.Unload();
            throw new ProtocolException(ErrorCodes.LoadFailed, $"cannot load assembly '{assemblyId}': {ex.Message}");
        }
    }

    public bool Unload(string assemblyId)
    {
        if (!_loaded.Remove(assemblyId, out var loaded)) return false;
        UnloadContext(loaded);
        return true;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    void UnloadContext(LoadedAssembly loaded)
    {
        loaded.Runners.Clear();
        _unloading.Add(new WeakReference(loaded.Context));
        loaded.Context.Unload();
    }

    public LoadedAssembly Get(string assemblyId) =>
        _loaded.TryGetValue(assemblyId, out var loaded)
            ? loaded
            : throw new ProtocolException(ErrorCodes.AssemblyNotLoaded, $"assembly '{assemblyId}' is not loaded");

    /// <summary>The cached runner for a class of a loaded assembly (built on first use).</summary>
    public IRunner GetRunner(string assemblyId, string className)
    {
        var loaded = Get(assemblyId);
        if (loaded.Runners.TryGetValue(className, out var runner)) return runner;
        var type = loaded.Assembly.GetType(className, throwOnError: false, ignoreCase: false)
                   ?? throw new ProtocolException(ErrorCodes.ClassNotFound, $"class '{className}' not found in assembly '{assemblyId}'");
        try
        {
            runner = RunnerFactory.Create(type, loaded.Options);
        }
        catch (ProtocolException)
        {
            throw;
        }
        catch (Exception ex)
        {
            if (ex is TargetInvocationException { InnerException: { } inner }) ex = inner;
            if (ex is ProtocolException) throw ex;
            throw new ProtocolException(ErrorCodes.ClassNotFound, $"cannot prepare '{className}': {ex.GetType().Name}: {ex.Message}");
        }
        loaded.Runners[className] = runner;
        return runner;
    }

    /// <summary>Full blocking collection, looping while unloaded contexts are still being finalized.</summary>
    public void Collect()
    {
        for (var i = 0; i < 10; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            if (UnloadingCount == 0) break;
        }
        GC.Collect();
    }
}
