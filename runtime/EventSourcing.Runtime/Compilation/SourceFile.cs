namespace EventSourcing.Runtime.Compilation;

public sealed record SourceFile(string Path, string Content);
