using System.Collections.Immutable;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;

namespace EventSourcing.Runtime.Compilation;

/// <summary>
/// <c>#line</c> directives that name a file (<c>#line 412 "/app/runtime/…/RequestDispatcher.cs"</c>, or the span form):
/// the file name goes into the embedded PDB, and from there into the frames of the tenant's failures and the host's raw
/// trace, where a path like the host's source tree or another tenant's archive posed as frames that are not the tenant's
/// (issue 27 red team, escape-corpus/exception-frames-forged-host.cs; closed in issue 28). A tenant's frames name only the
/// files it uploaded. <c>#line N</c> without a file, <c>#line hidden</c> and <c>#line default</c> stay allowed. Only the
/// tenant's own syntax trees are checked: the two allowed source generators' output is the framework's.
/// </summary>
public static class LineDirectives
{
    public static List<CompileDiagnostic> Check(CSharpCompilation compilation, ImmutableHashSet<SyntaxTree> generated)
    {
        var found = new List<CompileDiagnostic>();
        foreach (var tree in compilation.SyntaxTrees)
        {
            if (generated.Contains(tree)) continue;
            foreach (var directive in tree.GetRoot().DescendantTrivia(descendIntoTrivia: true)
                         .Where(t => t.IsKind(SyntaxKind.LineDirectiveTrivia) || t.IsKind(SyntaxKind.LineSpanDirectiveTrivia))
                         .Select(t => t.GetStructure()))
            {
                var file = directive switch
                {
                    LineDirectiveTriviaSyntax line => line.File,
                    LineSpanDirectiveTriviaSyntax span => span.File,
                    _ => default,
                };
                if (file.IsKind(SyntaxKind.None) || file.IsMissing) continue;
                // Reported where the directive is written (not where it maps to).
                var at = tree.GetLineSpan(directive!.Span);
                found.Add(new CompileDiagnostic(tree.FilePath, at.StartLinePosition.Line + 1, at.StartLinePosition.Character + 1, "error", "ES0002",
                    $"forbidden construct: #line directive naming a file ({Cap(file.ValueText)}) (a failure's frames name only the files you uploaded; use #line N without a file, #line hidden or #line default)"));
            }
        }
        return found;
    }

    static string Cap(string s) => s.Length > 100 ? s[..100] + "…" : s;
}
