using System.Reflection;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using EventSourcing.Runtime.Compilation;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Execution;

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

    /// <summary>Verifies (same policy as at compile time) and loads an assembly, then runs its type initialisers (see
    /// <see cref="LoadAndInitialize"/>) and charges the tenant for them. Returns false when the same bytes are already loaded
    /// under this id. <paramref name="tenantId"/> defaults to the assembly id (an assembly of its own tenant).</summary>
    public bool Load(string assemblyId, byte[] image, string? tenantId = null, long capBytes = TenantMemory.DefaultCapBytes)
    {
        var hygieneDomain = PoolHygiene.DomainOf(tenantId, assemblyId);
        tenantId ??= assemblyId;
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

        var held = Memory.Charged(tenantId);
        if (held + image.Length > capBytes) throw TenantMemory.Exceeded(tenantId, held, image.Length, capBytes, "its code");
        var (loaded, failure) = LoadAndInitialize(assemblyId, image, sha, tenantId, capBytes, held, hygieneDomain);
        if (failure is not null)
        {
            // Nothing of it is kept: its context goes, and its statics with it, now rather than at some later collection
            // (the next call may be another tenant's, and needs the heap back).
            Collect();
            throw failure;
        }
        _loaded[assemblyId] = loaded!;
        Memory.Charge(tenantId, loaded!.ChargedBytes);
        loaded.Resolver.Charge = bytes =>
        {
            var held = Memory.Charged(loaded.TenantId);
            if (held + bytes > loaded.CapBytes)
                return TenantMemory.Exceeded(loaded.TenantId, held, bytes, loaded.CapBytes, "serializer metadata built in a call:");
            Memory.Charge(loaded.TenantId, bytes);
            loaded.ChargedBytes += bytes;
            return null;
        };
        return true;
    }

    /// <summary>Where each tenant's memory in this executor is charged.</summary>
    public TenantMemory Memory { get; } = new();

    /// <summary>
    /// Loads the image and runs every type initialiser of the assembly now (non-generic types: the verifier refuses static
    /// fields in generic types, whose copies would appear per instantiation at call time), so that no static initialiser
    /// runs later inside some call — another tenant's batch waiting behind it — and what they allocate is charged to this
    /// tenant at its own load. An initialiser cannot be interrupted: its time is bounded by the load's deadline (the caller
    /// kills the host past it, blaming the loading tenant: the host acknowledged the load as started), its memory by the
    /// heap limit (an OutOfMemoryException fails the load). Kept out of line so that no reference to the context outlives
    /// a failure on the caller's stack.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    (LoadedAssembly? Loaded, ProtocolException? Failure) LoadAndInitialize(string assemblyId, byte[] image, byte[] sha, string tenantId, long capBytes, long held, string hygieneDomain)
    {
        var context = new TenantLoadContext("tenant:" + assemblyId);
        var (assembly, allocated, failure) = Initialize(context, image, assemblyId);
        failure ??= held + image.Length + allocated > capBytes
            ? TenantMemory.Exceeded(tenantId, held, image.Length + allocated, capBytes, "its code and static initialisers")
            : null;
        if (failure is null) return (new LoadedAssembly(assemblyId, context, assembly!, sha, tenantId, capBytes, hygieneDomain) { ChargedBytes = image.Length + allocated }, null);
        _unloading.Add(new WeakReference(context));
        context.Unload();
        return (null, failure);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static (Assembly? Assembly, long Allocated, ProtocolException? Failure) Initialize(TenantLoadContext context, byte[] image, string assemblyId)
    {
        Assembly assembly;
        try
        {
            using var stream = new MemoryStream(image, writable: false);
            assembly = context.LoadFromStream(stream);
        }
        catch (Exception ex) when (ex is BadImageFormatException or FileLoadException)
        {
            return (null, 0, new ProtocolException(ErrorCodes.LoadFailed, $"cannot load assembly '{assemblyId}': {ex.Message}"));
        }
        var before = TenantMemory.Allocated();
        Type? current = null;
        try
        {
            Type?[] types;
            try
            {
                types = assembly.GetTypes();
            }
            catch (ReflectionTypeLoadException ex)
            {
                types = ex.Types; // a type that cannot load fails where it is used, in the tenant's own calls, as before
            }
            foreach (var type in types)
            {
                if (type is null || type.ContainsGenericParameters) continue;
                current = type;
                try
                {
                    RuntimeHelpers.RunClassConstructor(type.TypeHandle);
                    StaticOptionsFreezer.Freeze(type);
                }
                catch (Exception ex) when (ex is not OutOfMemoryException && ex.InnerException is not OutOfMemoryException)
                {
                    // As before: the runtime keeps a static initialiser's exception and throws it wherever the type is used,
                    // in the tenant's own calls (APPLY_FAILED); the rest of the assembly works. What it allocated is charged below.
                }
            }
        }
        catch (Exception ex)
        {
            if (ex is TypeInitializationException { InnerException: { } inner }) ex = inner;
            var where = current is null ? "" : $" of {current.FullName}";
            ProtocolException failure = ex is OutOfMemoryException
                ? new(ErrorCodes.TenantMemoryExceeded, $"the static initialiser{where} ran out of memory ({ex.GetType().Name}); it allocated {TenantMemory.Allocated() - before:N0} bytes")
                : new(ErrorCodes.LoadFailed, $"cannot load the types of assembly '{assemblyId}': {ex.GetType().Name}: {ex.Message}");
            return (null, 0, failure);
        }
        return (assembly, TenantMemory.Allocated() - before, null);
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
        Memory.Release(loaded.TenantId, loaded.ChargedBytes);
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
        var before = TenantMemory.Allocated();
        loaded.Resolver.Suspended = true;
        try
        {
            runner = RunnerFactory.Create(type, loaded.Options);
            TenantMemory.PrepareMetadata(loaded.Options, runner.StateType);
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
        finally
        {
            loaded.Resolver.Suspended = false;
        }
        // The serializer keeps what it built for the state type (its metadata, converters the tenant declared) for the life
        // of the assembly: charged like static initialisers. Over the cap the runner is not kept; the caller unloads the
        // assembly (TENANT_MEMORY_EXCEEDED counts as an offence), which drops the rest.
        var allocated = TenantMemory.Allocated() - before;
        var held = Memory.Charged(loaded.TenantId);
        if (held + allocated > loaded.CapBytes)
            throw TenantMemory.Exceeded(loaded.TenantId, held, allocated, loaded.CapBytes, $"preparing {className}:");
        Memory.Charge(loaded.TenantId, allocated);
        loaded.ChargedBytes += allocated;
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
