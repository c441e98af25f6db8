using System.Diagnostics;
using System.Reflection;
using System.Runtime.Loader;

namespace EventSourcing.Runtime.Execution;

/// <summary>
/// The tenant's own frames of an exception's stack, innermost first. A frame is the tenant's when its method belongs
/// to an assembly loaded in a <see cref="TenantLoadContext"/> (each holds exactly one uploaded assembly); the host's,
/// the SDK's and the framework's frames all live in the default context and are left out, so nothing of the host's
/// internals (its types, paths, call structure) reaches the tenant. File and line come from the portable PDB
/// embedded at compile time (Compilation/DebugSymbols). The stack is read from the exception's captured trace, not its
/// virtual StackTrace property, which a tenant exception type may override.
/// </summary>
public static class TenantFrames
{
    public const int MaxFrames = 32;
    const int MaxMethodChars = 512;
    const int MaxFileChars = 1024;

    public static IReadOnlyList<TenantFrame> Of(Exception ex)
    {
        var frames = FramesOf(ex);
        // A throwing static constructor surfaces as TypeInitializationException at the host's first touch of the type:
        // the tenant's frames are those of the inner exception.
        if (frames.Count == 0 && ex is TypeInitializationException or TargetInvocationException && ex.InnerException is { } inner)
            frames = FramesOf(inner);
        return frames;
    }

    static List<TenantFrame> FramesOf(Exception ex)
    {
        var result = new List<TenantFrame>();
        StackFrame[] frames;
        try
        {
            frames = new StackTrace(ex, fNeedFileInfo: true).GetFrames();
        }
        catch
        {
            return result; // symbols that cannot be read: no frames rather than no error
        }
        foreach (var frame in frames)
        {
            if (result.Count == MaxFrames) break;
            var method = frame.GetMethod();
            if (method is null || !IsTenant(method)) continue;
            var file = frame.GetFileName();
            var line = frame.GetFileLineNumber();
            result.Add(new TenantFrame(Cap(Name(method), MaxMethodChars), file is null ? null : Cap(file, MaxFileChars), line > 0 ? line : null));
        }
        return result;
    }

    static bool IsTenant(MethodBase method) =>
        method.Module.Assembly is { } assembly && AssemblyLoadContext.GetLoadContext(assembly) is TenantLoadContext;

    static string Name(MethodBase method) =>
        method.DeclaringType is { } type ? $"{type.FullName ?? type.Name}.{method.Name}" : method.Name;

    static string Cap(string s, int max) => s.Length > max ? s[..max] : s;
}
