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
        _running = null;
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
        var (loaded, failure, allocated) = LoadAndInitialize(assemblyId, image, sha, tenantId, capBytes, held, hygieneDomain);
        if (failure is not null)
        {
            // Nothing of it is kept: its context goes, and its statics with it, now rather than at some later collection
            // (the next call may be another tenant's, and needs the heap back). A static initialiser that threw after
            // allocating little (its load is tried again by each of the tenant's calls) leaves its context to the next
            // ordinary collection instead of costing the executor a full blocking one per call.
            if (failure.Code != ErrorCodes.LoadFailed || allocated > CollectAfterFailedLoadBytes) Collect();
            throw failure;
        }
        Register(loaded!);
        return true;
    }

    void Register(LoadedAssembly loaded)
    {
        _loaded[loaded.Id] = loaded;
        Memory.Charge(loaded.TenantId, loaded.ChargedBytes);
        loaded.Resolver.Charge = bytes =>
        {
            var held = Memory.Charged(loaded.TenantId);
            if (held + bytes > loaded.CapBytes)
                return TenantMemory.Exceeded(loaded.TenantId, held, bytes, loaded.CapBytes, "serializer metadata built in a call:");
            Memory.Charge(loaded.TenantId, bytes);
            loaded.ChargedBytes += bytes;
            return null;
        };
    }

    /// <summary>
    /// The upload whose call this thread runs now (set by <see cref="Enter"/>). A TypeInitializationException thrown while
    /// it runs — seen first-chance, before any catch of the tenant's — marks it poisoned: the runtime now keeps an exception
    /// for some type of its (or instantiated over its types), the same object thrown again on every later use, whose stack
    /// trace each throw rewrites — memory from one call to the next. The verifier refuses the static constructors that could
    /// throw later than load (generic types) and the load refuses the others, so this is the backstop for what those walls
    /// miss (e.g. the compiler's closure singleton running out of memory in its static constructor): the upload is loaded
    /// again, from its own image, before its next call, so nothing the kept exception holds outlives the call that made it.
    /// </summary>
    [ThreadStatic] static LoadedAssembly? _running;

    static AssemblyRegistry() => AppDomain.CurrentDomain.FirstChanceException += static (_, e) =>
    {
        if (e.Exception is TypeInitializationException && _running is { } running) running.Poisoned = true;
    };

    /// <summary>Uploads loaded again because a call of theirs saw a type initialiser fail (<see cref="_running"/>).</summary>
    public long Reloads { get; private set; }

    /// <summary>The upload whose call starts on this thread: loaded again first if a call of it was poisoned (see
    /// <see cref="_running"/>). Costs a thread-static write per call; the reload only a poisoned upload's next call.</summary>
    public LoadedAssembly Enter(LoadedAssembly loaded)
    {
        if (loaded.Poisoned) loaded = Reload(loaded);
        _running = loaded;
        return loaded;
    }

    /// <summary>The call has ended: nothing keeps its upload from being collected once unloaded. If a reload in it left a
    /// context holding more than a little, it is collected now, at the end of the poisoned tenant's own call (during the
    /// reload the call's frames still referenced the old upload).</summary>
    public void Leave()
    {
        _running = null;
        if (!_collectPending) return;
        _collectPending = false;
        Collect();
    }

    bool _collectPending;

    LoadedAssembly Reload(LoadedAssembly old)
    {
        _running = null;
        _loaded.Remove(old.Id);
        UnloadContext(old);
        // Its statics go with the old context: collected at the end of this call when they are more than a little (a tenant
        // poisoning every call would otherwise pile up contexts waiting for a full collection) (Leave).
        _collectPending |= old.ChargedBytes > CollectAfterFailedLoadBytes;
        Reloads++;
        var (loaded, failure, _) = LoadAndInitialize(old.Id, old.Image, old.Sha256, old.TenantId, old.CapBytes, Memory.Charged(old.TenantId), old.HygieneDomain);
        if (failure is not null)
        {
            _collectPending = true;
            throw failure;
        }
        Register(loaded!);
        return loaded!;
    }

    /// <summary>A load refused because a static initialiser threw, having allocated more than this, is collected at once.</summary>
    public const long CollectAfterFailedLoadBytes = 1L << 20;

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
    (LoadedAssembly? Loaded, ProtocolException? Failure, long Allocated) LoadAndInitialize(string assemblyId, byte[] image, byte[] sha, string tenantId, long capBytes, long held, string hygieneDomain)
    {
        var context = new TenantLoadContext("tenant:" + assemblyId);
        var (assembly, allocated, failure) = Initialize(context, image, assemblyId);
        // Over the cap is the memory's refusal (an offence) even when an initialiser threw after allocating it.
        if ((failure is null || failure.Code == ErrorCodes.LoadFailed) && held + image.Length + allocated > capBytes)
            failure = TenantMemory.Exceeded(tenantId, held, image.Length + allocated, capBytes, "its code and static initialisers");
        if (failure is null)
            return (new LoadedAssembly(assemblyId, context, assembly!, image, sha, tenantId, capBytes, hygieneDomain)
            {
                ChargedBytes = image.Length + allocated,
                KeptRegexes = KeptRegexRunners.Find(Types(assembly!)),
            }, null, allocated);
        _unloading.Add(new WeakReference(context));
        context.Unload();
        JsonSharedCaches.AfterUnload(); // its initialisers may have serialized through the shared options
        return (null, failure, allocated);
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
                    // The runtime keeps a failed static initialiser's exception and throws that same object on every later
                    // use of the type; each throw rewrites its stack trace, which the next call could read back: memory
                    // carried from call to call (issue 27 red team, escape-corpus/cross-call-type-init-exception-*.cs).
                    // So the upload is not loaded: its context (and the kept exception) goes with the failure.
                    if (ex is TypeInitializationException { InnerException: { } thrown }) ex = thrown;
                    var message = ex.Message.Length > 300 ? ex.Message[..300] + "…" : ex.Message;
                    return (null, TenantMemory.Allocated() - before, new ProtocolException(ErrorCodes.LoadFailed,
                        $"the static initialiser of {type.FullName} threw {ex.GetType().Name}: {message} (an upload whose static initialiser throws is not loaded: the runtime would keep its exception from one call to the next)"));
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

    static Type?[] Types(Assembly assembly)
    {
        try
        {
            return assembly.GetTypes();
        }
        catch (ReflectionTypeLoadException ex)
        {
            return ex.Types;
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
        Memory.Release(loaded.TenantId, loaded.ChargedBytes);
        if (_running == loaded) _running = null;
        loaded.Runners.Clear();
        _unloading.Add(new WeakReference(loaded.Context));
        loaded.Context.Unload();
        JsonSharedCaches.AfterUnload(); // what its last call cached in a shared serializer context must not keep it alive
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
