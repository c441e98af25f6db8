using System.Collections.Immutable;
using System.Runtime.InteropServices;
using EventSourcing.Runtime.Host;
using Microsoft.CodeAnalysis;

namespace EventSourcing.Runtime.Compilation;

/// <summary>
/// The restricted set of assemblies tenant code is compiled against: the SDK contract plus a few
/// framework reference assemblies, taken from the Microsoft.NETCore.App.Ref pack when present
/// (else from the running framework's directory). Loaded once per process.
/// </summary>
public static class ReferenceSet
{
    /// <summary>Framework assemblies in the reference set (file names without .dll).</summary>
    public static readonly string[] FrameworkAssemblies =
    {
        "System.Runtime", "System.Collections", "System.Collections.Immutable", "System.Linq", "System.Memory",
        "System.Runtime.Numerics", "System.Text.Json", "System.Text.RegularExpressions", "System.Text.Encodings.Web",
        "System.Security.Cryptography", // for SHA256.HashData only: the rest of System.Security stays refused (ApiPolicy)
        // Only so that the compiler can see NodaTime's value types whole (they implement IXmlSerializable: converting one to
        // IFormattable or IEquatable is CS0012 without it); every System.Xml type stays refused (ApiPolicy).
        "System.Xml.ReaderWriter",
    };

    /// <summary>Warnings about the reference set itself, not the tenant's code: NodaTime is built against .NET 8's
    /// System.Runtime and unifies with .NET 10's (CS1701/CS1702, which `dotnet build` suppresses by default too).</summary>
    public static readonly ImmutableDictionary<string, ReportDiagnostic> SuppressedDiagnostics = ImmutableDictionary.CreateRange(new[]
    {
        KeyValuePair.Create("CS1701", ReportDiagnostic.Suppress), KeyValuePair.Create("CS1702", ReportDiagnostic.Suppress),
    });

    static readonly Lazy<(IReadOnlyList<MetadataReference> References, string Source)> Cached = new(Load);

    public static IReadOnlyList<MetadataReference> References => Cached.Value.References;

    /// <summary>Where the framework references came from (for logs and the stats request).</summary>
    public static string Source => Cached.Value.Source;

    static (IReadOnlyList<MetadataReference>, string) Load()
    {
        var (dir, implementation) = FindFrameworkDirectory();
        return (LoadFrom(dir, implementation), dir);
    }

    /// <summary>The reference set from a given framework directory: reference assemblies (a Microsoft.NETCore.App.Ref
    /// pack) or, with <paramref name="implementation"/>, the runtime's own assemblies, where System.Private.CoreLib
    /// exposes far more than the reference assemblies do (tests check the policy against both).</summary>
    public static IReadOnlyList<MetadataReference> LoadFrom(string dir, bool implementation)
    {
        var list = new List<MetadataReference>();
        foreach (var name in FrameworkAssemblies)
        {
            var path = Path.Combine(dir, name + ".dll");
            if (File.Exists(path)) list.Add(MetadataReference.CreateFromFile(path));
            else if (name is "System.Runtime" or "System.Collections" or "System.Linq" or "System.Text.Json")
                throw new InvalidOperationException($"reference assembly {path} not found");
        }
        // Implementation assemblies forward most types to System.Private.CoreLib, and Uri to System.Private.Uri,
        // which must then be referenced too.
        if (implementation)
        {
            list.Add(MetadataReference.CreateFromFile(Path.Combine(dir, "System.Private.CoreLib.dll")));
            list.Add(MetadataReference.CreateFromFile(Path.Combine(dir, "System.Private.Uri.dll")));
        }

        // XxHash32/64/128/3: a package the host itself depends on (not in the framework), referenced from the host's own copy,
        // the one tenant code binds to at run time. Only its static one-shot members are allowed (ApiPolicy).
        var hashing = typeof(System.IO.Hashing.XxHash64).Assembly.Location;
        if (string.IsNullOrEmpty(hashing)) throw new InvalidOperationException("System.IO.Hashing has no file location");
        list.Add(MetadataReference.CreateFromFile(hashing));

        var sdk = typeof(EventSourcing.Event).Assembly.Location;
        if (string.IsNullOrEmpty(sdk)) throw new InvalidOperationException("EventSourcing.Sdk has no file location (single-file publish is not supported)");
        list.Add(MetadataReference.CreateFromFile(sdk));
        list.Add(NodaTimeReference());
        return list;
    }

    /// <summary>NodaTime, the tenants' time-zone API (TimePolicy): the host's own copy (a package dependency published beside
    /// it), so that what tenant code compiles against is what its load context resolves to (the default context's).</summary>
    static PortableExecutableReference NodaTimeReference()
    {
        var path = typeof(NodaTime.Instant).Assembly.Location;
        if (string.IsNullOrEmpty(path)) throw new InvalidOperationException("NodaTime has no file location (single-file publish is not supported)");
        return MetadataReference.CreateFromFile(path);
    }

    /// <summary>The running runtime's directory (implementation assemblies).</summary>
    public static string RuntimeDirectory => RuntimeEnvironment.GetRuntimeDirectory();

    /// <summary>The reference assemblies runtime/build.sh ships beside the host (ref/ in its folder).</summary>
    public static string ShippedDirectory => Path.Combine(AppContext.BaseDirectory, "ref");

    /// <summary>EVENTSOURCING_REF_DIR, else the reference assemblies shipped beside the host (build.sh), else
    /// packs/Microsoft.NETCore.App.Ref/{highest version of this major}/ref/net{major}.0 under the dotnet root, else the
    /// runtime directory (implementation assemblies, a wider surface: a warning is logged).</summary>
    static (string Dir, bool Implementation) FindFrameworkDirectory()
    {
        var overrideDir = Environment.GetEnvironmentVariable("EVENTSOURCING_REF_DIR");
        if (!string.IsNullOrEmpty(overrideDir))
            return (overrideDir, File.Exists(Path.Combine(overrideDir, "System.Private.CoreLib.dll")));
        if (File.Exists(Path.Combine(ShippedDirectory, "System.Runtime.dll"))) return (ShippedDirectory, false);

        var runtimeDir = RuntimeEnvironment.GetRuntimeDirectory(); // .../shared/Microsoft.NETCore.App/10.0.x/
        var major = Environment.Version.Major;
        var dotnetRoot = Path.GetFullPath(Path.Combine(runtimeDir, "..", "..", ".."));
        var packs = Path.Combine(dotnetRoot, "packs", "Microsoft.NETCore.App.Ref");
        if (Directory.Exists(packs))
        {
            var best = Directory.GetDirectories(packs)
                .Select(d => (Dir: d, Version: Version.TryParse(Path.GetFileName(d).Split('-')[0], out var v) ? v : null))
                .Where(x => x.Version is not null && x.Version.Major == major)
                .OrderByDescending(x => x.Version)
                .Select(x => Path.Combine(x.Dir, "ref", $"net{major}.0"))
                .FirstOrDefault(d => File.Exists(Path.Combine(d, "System.Runtime.dll")));
            if (best is not null) return (best, false);
        }
        Log.Error($"no reference assemblies found (neither {ShippedDirectory} nor a Microsoft.NETCore.App.Ref pack): compiling against the runtime's implementation assemblies");
        return (runtimeDir, true);
    }
}
