using System.Text.RegularExpressions;
using Microsoft.CodeAnalysis;

namespace EventSourcing.Runtime.Compilation;

/// <summary>
/// Most refused APIs live in assemblies that are not in the reference set, so the compiler reports them as
/// "type or namespace not found". This adds the policy's reason to such diagnostics so the tenant sees why
/// (e.g. "[forbidden API: System.Console (console I/O is not allowed)]").
/// </summary>
public static partial class DiagnosticHints
{
    [GeneratedRegex("'([^']+)'")]
    private static partial Regex Quoted();

    /// <summary>For a partial member left without its implementation part, which a source generator would have written.</summary>
    public const string GeneratorHint =
        "source generators other than the built-in Regex ([GeneratedRegex]) and System.Text.Json ([JsonSerializable]) ones are not run: write the implementation part yourself";

    public static CompileDiagnostic WithHint(CompileDiagnostic diagnostic, Diagnostic source)
    {
        var hint = HintFor(source.Id, diagnostic.Message);
        return hint is null ? diagnostic : diagnostic with { Message = $"{diagnostic.Message} [{hint}]", Hint = hint };
    }

    public static string? HintFor(string id, string message)
    {
        var quoted = Quoted().Matches(message).Select(m => m.Groups[1].Value).ToList();
        switch (id)
        {
            case "CS0227": // Unsafe code may only appear if compiling with /unsafe
            case "CS0214": // Pointers and fixed size buffers may only be used in an unsafe context
            case "CS0208": // Cannot take the address of... managed type
            case "CS8812": // function pointer
                return "forbidden: unsafe code is not allowed";
            case "CS1969": // One or more types required to compile a dynamic expression cannot be found
            case "CS0518" when message.Contains("RuntimeBinder", StringComparison.Ordinal):
            case "CS0656" when message.Contains("RuntimeBinder", StringComparison.Ordinal):
                return "forbidden API: dynamic (the Microsoft.CSharp runtime binder is not allowed)";
            case "CS0234" when quoted.Count >= 2: // The type or namespace name 'X' does not exist in the namespace 'N'
            {
                var full = quoted[1] + "." + quoted[0];
                var reason = ApiPolicy.DeniedNamespaceReason(full);
                if (reason is not null) return $"forbidden API: {full} ({reason})";
                var known = ApiPolicy.WellKnownForbiddenName(quoted[0]);
                return known is { } k ? $"forbidden API: {k.FullName} ({k.Reason})" : null;
            }
            case "CS0246" or "CS0103" or "CS0117" when quoted.Count >= 1:
            {
                // CS0117: 'Type' does not contain a definition for 'Member' → look at the member name too.
                foreach (var name in quoted)
                {
                    var known = ApiPolicy.WellKnownForbiddenName(name.Split('<')[0]);
                    if (known is { } k) return $"forbidden API: {k.FullName} ({k.Reason})";
                }
                return null;
            }
            case "CS0656" or "CS0518" when quoted.Count >= 1: // Missing compiler required member 'System.Threading.Monitor.Enter'
            {
                var name = quoted[0];
                var reason = ApiPolicy.DeniedNamespaceReason(name);
                if (reason is null) return null;
                var lastDot = name.LastIndexOf('.');
                return $"forbidden API: {(id == "CS0656" && lastDot > 0 ? name[..lastDot] : name)} ({reason})";
            }
            case "CS7027" or "CS7028" or "CS7033" or "CS7034" or "CS8102":
                return "forbidden: assembly signing is not allowed (AssemblyKeyFile/AssemblyKeyName/AssemblyDelaySign)";
            case "CS8795": // Partial method 'M' must have an implementation part because it has accessibility modifiers
            case "CS9248": // Partial property 'P' must have an implementation part
                return GeneratorHint;
            case "CS0012": // The type 'X' is defined in an assembly that is not referenced
                return "that assembly is not in the reference set available to reducers and projections";
            default:
                return null;
        }
    }
}
