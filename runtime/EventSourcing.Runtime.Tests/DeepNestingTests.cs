using System.Diagnostics;
using EventSourcing.Runtime.Compilation;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Tests;

/// <summary>Deeply nested sources end in a compile result, never in a stack overflow that kills the compiler.</summary>
public class DeepNestingTests
{
    readonly InProcessHost _host = new(HostMode.Compile);

    static string Reducer(string body, string members = "") =>
        "using EventSourcing;\npublic sealed class S { }\npublic sealed class L<T> { }\npublic sealed class DeepReducer : IReducer<S>\n{\n" +
        $"    {members}public S Apply(S s, Event e) {{ {body} return s; }}\n}}\n";

    static string Error(InProcessHost host, string source)
    {
        var result = host.Compile("Deep.cs", source);
        Assert.False(result["ok"]!.GetValue<bool>());
        return result["compilationError"]!.GetValue<string>();
    }

    static void Compiles(InProcessHost host, string source)
    {
        var result = host.Compile("Deep.cs", source);
        Assert.True(result["ok"]!.GetValue<bool>(), result["compilationError"]?.GetValue<string>());
    }

    [Fact]
    public void HundredThousandNestedParenthesesAreRefusedAtOnceWithCS8078()
    {
        const int n = 100_000;
        var watch = Stopwatch.StartNew();
        var error = Error(_host, Reducer($"var x = {new string('(', n)}1{new string(')', n)};"));
        Assert.Contains("error CS8078", error);
        Assert.Contains($"brackets nested more than {NestingLimit.MaxBrackets} deep", error);
        Assert.Matches(@"Deep\.cs\(6,\d+\)", error);
        Assert.True(watch.Elapsed < TimeSpan.FromSeconds(5), $"took {watch.Elapsed}");
    }

    [Fact]
    public void NestingUpToTheLimitStillCompiles()
    {
        // The class body and the method body are two levels already.
        var n = NestingLimit.MaxBrackets - 2;
        Compiles(_host, Reducer($"var x = {new string('(', n)}1{new string(')', n)};"));
        var m = NestingLimit.MaxAngles - 1;
        Compiles(_host, Reducer($"{string.Concat(Enumerable.Repeat("L<", m))}int{new string('>', m)}? x = null;"));
    }

    [Fact]
    public void DeepTypeArgumentsAreRefusedWithCS8078()
    {
        // 700k of these (a 2 MiB file) overflow even a 512 MiB stack in the parser's look-ahead.
        var n = 200_000;
        var error = Error(_host, Reducer($"{string.Concat(Enumerable.Repeat("L<", n))}int{new string('>', n)}? x = null;"));
        Assert.Contains($"error CS8078: An expression is too long or complex to compile: type arguments nested more than {NestingLimit.MaxAngles} deep", error);
    }

    [Fact]
    public void ComparisonsAndTextAreNotCountedAsNesting()
    {
        var parens = new string('(', 5000);
        var comparisons = string.Join(" && ", Enumerable.Range(0, 3000).Select(i => $"e.Version < {i}"));
        var args = string.Join(", ", Enumerable.Range(0, 1500).Select(i => $"e.Version < {i}"));
        Compiles(_host, Reducer(
            $"var x = \"{parens}\"; /* {parens} */ var y = '('; var z = {comparisons}; var w = F({args});",
            "static bool F(params bool[] b) => true; "));
    }

    [Fact]
    public void DeepNestingWithoutBracketsCompilesOnTheCompilersLargeStack()
    {
        // 15k nested negations overflow the 8 MiB stack of a main thread inside Roslyn's binder (a dead compiler,
        // before this stack); the compile thread's stack holds them.
        Compiles(_host, Reducer($"var x = {new string('!', 15_000)}true;"));
        Assert.True(TenantCompiler.StackBytes >= 256 * 1024 * 1024);
    }

    [Fact]
    public void SyntaxDeeperThanTheLimitIsRefusedWithCS8078()
    {
        var error = Error(_host, Reducer($"var x = {new string('!', NestingLimit.MaxSyntaxDepth + 10)}true;"));
        Assert.Contains($"error CS8078: An expression is too long or complex to compile: code nested more than {NestingLimit.MaxSyntaxDepth} deep", error);
    }
}
