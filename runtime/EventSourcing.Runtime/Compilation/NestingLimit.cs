using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.Text;

namespace EventSourcing.Runtime.Compilation;

/// <summary>
/// Refuses nesting that Roslyn would recurse through without its stack guard, before it does. Roslyn turns most
/// deep nesting into CS8078 itself, but not everywhere: at every '(' and at every `Name&lt;` its parser scans
/// ahead (for a cast, tuple, lambda or type arguments) unguarded and to the full depth, which costs quadratic
/// time for parentheses (10k: 4 s, 100k: minutes) and overflows even a large stack for a long run of type
/// arguments; binding type arguments or unary operators recurses unguarded too. The limits are far above what real
/// sources nest, and the checks are iterative: a linear pass over the tokens before parsing, a walk of the tree after.
/// </summary>
public static class NestingLimit
{
    /// <summary>Brackets <c>( [ {</c> open at once.</summary>
    public const int MaxBrackets = 1000;

    /// <summary>Nested type argument lists: <c>&lt;</c> not yet closed by <c>&gt;</c>, within a run of tokens that can make up a type.</summary>
    public const int MaxAngles = 1000;

    /// <summary>Depth of the syntax tree (e.g. 15k nested negations overflow the 8 MiB stack of a main thread).</summary>
    public const int MaxSyntaxDepth = 20_000;

    /// <summary>Brackets and type argument lists nested too deep, from the tokens alone (before Roslyn parses).</summary>
    public static CompileDiagnostic? CheckTokens(SourceFile file, CSharpParseOptions options)
    {
        int brackets = 0, angles = 0;
        foreach (var token in SyntaxFactory.ParseTokens(file.Content, options: options))
        {
            var kind = token.Kind();
            switch (kind)
            {
                case SyntaxKind.OpenParenToken or SyntaxKind.OpenBracketToken or SyntaxKind.OpenBraceToken:
                    if (++brackets > MaxBrackets) return TooDeep(file, token.SpanStart, $"brackets nested more than {MaxBrackets} deep");
                    break;
                case SyntaxKind.CloseParenToken or SyntaxKind.CloseBracketToken or SyntaxKind.CloseBraceToken:
                    if (brackets > 0) brackets--;
                    break;
            }
            switch (kind)
            {
                case SyntaxKind.LessThanToken:
                    if (++angles > MaxAngles) return TooDeep(file, token.SpanStart, $"type arguments nested more than {MaxAngles} deep");
                    break;
                case SyntaxKind.GreaterThanToken:
                    if (angles > 0) angles--;
                    break;
                case SyntaxKind.IdentifierToken or SyntaxKind.CommaToken or SyntaxKind.DotToken or SyntaxKind.ColonColonToken
                    or SyntaxKind.QuestionToken or SyntaxKind.AsteriskToken or SyntaxKind.OpenBracketToken or SyntaxKind.CloseBracketToken:
                    break;
                default:
                    // Anything that cannot be part of a type ends the run: a comparison's '<' is not carried on.
                    if (!SyntaxFacts.IsPredefinedType(kind)) angles = 0;
                    break;
            }
        }
        return null;
    }

    /// <summary>A syntax tree deeper than <see cref="MaxSyntaxDepth"/>, walked without recursion.</summary>
    public static CompileDiagnostic? CheckDepth(SyntaxTree tree)
    {
        var stack = new Stack<(SyntaxNode Node, int Depth)>();
        stack.Push((tree.GetRoot(), 1));
        while (stack.Count > 0)
        {
            var (node, depth) = stack.Pop();
            if (depth > MaxSyntaxDepth)
            {
                var at = node.GetLocation().GetLineSpan().StartLinePosition;
                return new CompileDiagnostic(tree.FilePath, at.Line + 1, at.Character + 1, "error", "CS8078",
                    $"An expression is too long or complex to compile: code nested more than {MaxSyntaxDepth} deep");
            }
            foreach (var child in node.ChildNodes()) stack.Push((child, depth + 1));
        }
        return null;
    }

    static CompileDiagnostic TooDeep(SourceFile file, int position, string what)
    {
        var at = SourceText.From(file.Content).Lines.GetLinePosition(position);
        return new CompileDiagnostic(file.Path, at.Line + 1, at.Character + 1, "error", "CS8078",
            $"An expression is too long or complex to compile: {what}");
    }
}
