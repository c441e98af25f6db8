using Microsoft.CodeAnalysis;

namespace EventSourcing.Runtime.Compilation;

public sealed record CompileResult(
    bool Ok,
    IReadOnlyList<DiscoveredImplementation> Discovered,
    byte[]? Assembly,
    IReadOnlyList<CompileDiagnostic> Errors,
    IReadOnlyList<CompileDiagnostic> Warnings,
    string? Message)
{
    /// <summary>Readable text: a summary line (when there is one) and then one diagnostic per line.</summary>
    public string ErrorText =>
        string.Join('\n', (Message is null ? Array.Empty<string>() : new[] { Message }).Concat(Errors.Select(e => e.ToString())));
}
