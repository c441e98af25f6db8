using System.Collections.Immutable;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Security.Cryptography;
using System.Text;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.Emit;
using Microsoft.CodeAnalysis.Text;

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
