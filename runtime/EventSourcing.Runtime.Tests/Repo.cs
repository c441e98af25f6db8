using EventSourcing.Runtime.Compilation;

namespace EventSourcing.Runtime.Tests;

/// <summary>Paths in the repository.</summary>
public static class Repo
{
    public static readonly string Root = FindRoot();

    public static string Runtime => Path.Combine(Root, "runtime");
    public static string Examples => Path.Combine(Root, "examples");
    public static string EscapeCorpus => Path.Combine(Root, "runtime", "escape-corpus");

    static string FindRoot()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "runtime", "protocol.json"))) return dir.FullName;
        }
        throw new InvalidOperationException("repository root (with runtime/protocol.json) not found above " + AppContext.BaseDirectory);
    }

    /// <summary>The .cs files of an example, with paths relative to the example folder.</summary>
    public static List<SourceFile> Example(string name)
    {
        var dir = Path.Combine(Examples, name);
        return Directory.GetFiles(dir, "*.cs", SearchOption.AllDirectories)
            .OrderBy(f => f, StringComparer.Ordinal)
            .Select(f => new SourceFile(Path.GetRelativePath(dir, f).Replace('\\', '/'), File.ReadAllText(f)))
            .ToList();
    }
}
