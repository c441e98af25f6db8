using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.Text;

namespace EventSourcing.Runtime.Compilation;

/// <summary>
/// Refuses a source whose brackets nest deeper than <see cref="MaxDepth"/>, before Roslyn parses it. At every '('
/// Roslyn's parser scans ahead for a cast, tuple or lambda, unguarded and to the full depth: nested parentheses cost
/// quadratic time (10k: 4 s, 100k: minutes) and, on a small stack, overflow it. No real source nests brackets that
/// deep; the lexer that counts them is linear and iterative.
/// </summary>
public static class NestingLimit
{
    public const int MaxDepth = 1000;

    public static CompileDiagnostic? Check(SourceFile file, CSharpParseOptions options)
    {
        var depth = 0;
        foreach (var token in SyntaxFactory.ParseTokens(file.Content, options: options))
        {
            switch (token.Kind())
            {
                case SyntaxKind.OpenParenToken or SyntaxKind.OpenBracketToken or SyntaxKind.OpenBraceToken:
                    if (++depth > MaxDepth)
                    {
                        var at = SourceText.From(file.Content).Lines.GetLinePosition(token.SpanStart);
                        return new CompileDiagnostic(file.Path, at.Line + 1, at.Character + 1, "error", "CS8078",
                            $"An expression is too long or complex to compile: brackets nested more than {MaxDepth} deep");
                    }
                    break;
                case SyntaxKind.CloseParenToken or SyntaxKind.CloseBracketToken or SyntaxKind.CloseBraceToken:
                    if (depth > 0) depth--;
                    break;
            }
        }
        return null;
    }
}
