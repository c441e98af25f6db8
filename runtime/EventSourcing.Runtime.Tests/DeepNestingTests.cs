using System.Diagnostics;
using EventSourcing.Runtime.Compilation;

namespace EventSourcing.Runtime.Tests;

/// <summary>Deeply nested sources end in a compile result, never in a stack overflow that kills the compiler.</summary>
public class DeepNestingTests
{
    readonly InProcessHost _host = new(HostMode.Compile);

    static string Reducer(string body) =>
        "using EventSourcing;\npublic sealed class S { }\npublic sealed class DeepReducer : IReducer<S>\n{\n" +
        $"    public S Apply(S s, Event e) {{ {body} return s; }}\n}}\n";

    [Fact]
    public void HundredThousandNestedParenthesesAreRefusedAtOnceWithCS8078()
    {
        const int n = 100_000;
        var watch = Stopwatch.StartNew();
        var result = _host.Compile("Deep.cs", Reducer($"var x = {new string('(', n)}1{new string(')', n)};"));
        Assert.False(result["ok"]!.GetValue<bool>());
        var error = result["compilationError"]!.GetValue<string>();
        Assert.Contains("error CS8078", error);
        Assert.Contains($"nested more than {NestingLimit.MaxDepth} deep", error);
        Assert.Matches(@"Deep\.cs\(5,\d+\)", error);
        Assert.True(watch.Elapsed < TimeSpan.FromSeconds(5), $"took {watch.Elapsed}");
    }

    [Fact]
    public void NestingUpToTheLimitStillCompiles()
    {
        // The class body and the method body are two levels already.
        var n = NestingLimit.MaxDepth - 2;
        var result = _host.Compile("Nested.cs", Reducer($"var x = {new string('(', n)}1{new string(')', n)};"));
        Assert.True(result["ok"]!.GetValue<bool>(), result["compilationError"]?.GetValue<string>());
    }

    [Fact]
    public void BracketsInStringsAndCommentsAreNotCounted()
    {
        var parens = new string('(', 5000);
        var result = _host.Compile("Text.cs", Reducer($"var x = \"{parens}\"; /* {parens} */ var y = '(';"));
        Assert.True(result["ok"]!.GetValue<bool>(), result["compilationError"]?.GetValue<string>());
    }

    [Fact]
    public void DeepNestingWithoutBracketsCompilesOnTheCompilersLargeStack()
    {
        // 100k nested negations overflow an 8 MiB (or 64 MiB) stack inside Roslyn; the compile thread's stack holds them.
        var result = _host.Compile("Not.cs", Reducer($"var x = {new string('!', 100_000)}true;"));
        Assert.True(result["ok"]!.GetValue<bool>(), result["compilationError"]?.GetValue<string>());
        Assert.True(TenantCompiler.StackBytes >= 256 * 1024 * 1024);
    }
}
