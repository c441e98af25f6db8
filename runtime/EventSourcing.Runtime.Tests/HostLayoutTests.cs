using System.Text.RegularExpressions;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Tests;

/// <summary>Issue 26 item 7: the production assembly holds no test-only probe and no benchmark, and the sources of the host,
/// its benchmarks and these tests keep the layout a reader relies on: namespace = project namespace + folder, one top-level
/// type per file, named as the file.</summary>
public partial class HostLayoutTests
{
    static readonly string[] Projects = ["EventSourcing.Runtime", "EventSourcing.Runtime.Bench", "EventSourcing.Runtime.Tests"];

    [Fact]
    public void ProductionAssemblyHasNoProbeAndNoBenchmark()
    {
        var types = typeof(RequestDispatcher).Assembly.GetTypes();
        Assert.Contains(types, t => t == typeof(RequestDispatcher)); // the scan sees the host's own types
        Assert.DoesNotContain(types, t => t.Namespace?.StartsWith("EventSourcing.Runtime.Probe", StringComparison.Ordinal) == true);
        Assert.DoesNotContain(types, t => t.Namespace?.StartsWith("EventSourcing.Runtime.Bench", StringComparison.Ordinal) == true);
        Assert.DoesNotContain(types, t => t.Name.Contains("Probe", StringComparison.Ordinal) || t.Name.Contains("Bench", StringComparison.Ordinal));
        Assert.DoesNotContain("probe", RequestDispatcher.RequestTypes.Keys);
        Assert.DoesNotContain("probe", RequestDispatcher.HandledTypes);
    }

    [Theory]
    [MemberData(nameof(SourceFiles))]
    public void NamespaceMatchesFolder(string project, string relativePath)
    {
        var text = File.ReadAllText(Path.Combine(Repo.Runtime, project, relativePath));
        var folder = Path.GetDirectoryName(relativePath)!;
        var expected = folder.Length == 0 ? project : project + "." + folder.Replace(Path.DirectorySeparatorChar, '.');
        var declared = NamespaceLine().Matches(text).Select(m => m.Groups[1].Value).ToList();
        // Top-level statements (Program.cs) declare no namespace and no type of their own.
        if (declared.Count == 0 && TopLevelType().Count(text) == 0) return;
        Assert.Equal([expected], declared);
    }

    [Theory]
    [MemberData(nameof(SourceFiles))]
    public void OneTopLevelTypePerFileNamedAsTheFile(string project, string relativePath)
    {
        var text = File.ReadAllText(Path.Combine(Repo.Runtime, project, relativePath));
        var types = TopLevelType().Matches(text).Select(m => m.Groups[1].Value).ToList();
        if (Path.GetFileName(relativePath) == "Program.cs") { Assert.Empty(types); return; }
        // Partial files are named Type.Concern.cs.
        var fileType = Path.GetFileName(relativePath).Split('.')[0];
        Assert.Equal([fileType], types);
    }

    public static TheoryData<string, string> SourceFiles()
    {
        var data = new TheoryData<string, string>();
        foreach (var project in Projects)
        {
            var dir = Path.Combine(Repo.Runtime, project);
            foreach (var file in Directory.EnumerateFiles(dir, "*.cs", SearchOption.AllDirectories).Order(StringComparer.Ordinal))
            {
                var relative = Path.GetRelativePath(dir, file);
                if (relative.StartsWith("bin" + Path.DirectorySeparatorChar, StringComparison.Ordinal)
                    || relative.StartsWith("obj" + Path.DirectorySeparatorChar, StringComparison.Ordinal)) continue;
                data.Add(project, relative);
            }
        }
        return data;
    }

    [GeneratedRegex(@"^namespace ([\w.]+)\s*;", RegexOptions.Multiline)]
    private static partial Regex NamespaceLine();

    /// <summary>A type declared at the top level of a file-scoped namespace (column 0), whatever its accessibility.</summary>
    [GeneratedRegex(@"^(?:(?:public|internal|static|sealed|abstract|partial|readonly|ref|file)\s+)*(?:class|struct|interface|enum|record(?:\s+struct|\s+class)?)\s+(\w+)", RegexOptions.Multiline)]
    private static partial Regex TopLevelType();
}
