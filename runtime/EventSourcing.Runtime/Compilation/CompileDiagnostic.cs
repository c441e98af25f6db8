namespace EventSourcing.Runtime.Compilation;

/// <summary>One compiler or policy diagnostic. <paramref name="Hint"/>: why a compiler error is likely the sandbox's doing
/// (also appended to <paramref name="Message"/> in brackets, as earlier clients read it).</summary>
public sealed record CompileDiagnostic(string? Path, int Line, int Column, string Severity, string Id, string Message, string? Hint = null)
{
    /// <summary>e.g. <c>Account.cs(12,5): error CS0103: The name 'x' does not exist in the current context</c>.</summary>
    public override string ToString() =>
        Path is null ? $"{Severity} {Id}: {Message}" : $"{Path}({Line},{Column}): {Severity} {Id}: {Message}";
}
