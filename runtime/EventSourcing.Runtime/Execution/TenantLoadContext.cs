using System.Reflection;
using System.Runtime.Loader;

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
