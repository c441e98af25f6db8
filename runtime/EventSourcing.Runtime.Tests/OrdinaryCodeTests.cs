using System.Text.Json.Nodes;
using EventSourcing.Runtime.Compilation;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Tests;

/// <summary>
/// Issue 27 item 5 (no false refusals): ordinary code that builds and runs locally compiles and runs here too. Each
/// allowance has escape-corpus cases (runtime/escape-corpus/activator-*.cs) showing it carries no state.
/// </summary>
public class OrdinaryCodeTests
{
    readonly InProcessHost _host = new(HostMode.Exec | HostMode.Compile);

    static string Reducer(string members, string apply) => $$"""
        using System;
        using System.Collections.Frozen;
        using System.Collections.Generic;
        using System.Collections.Immutable;
        using System.Linq;
        using System.Text.RegularExpressions;
        using EventSourcing;

        namespace Ordinary
        {
            public sealed class Counter { public int Value { get; set; } public string Text { get; set; } = ""; }
            public sealed class Made { public int Hits { get; set; } = 7; }
            public struct Pair { public int A; public int B; }
            {{members}}

            public sealed class CounterReducer : IReducer<Counter>
            {
                public Counter Apply(Counter state, Event e)
                {
                    {{apply}}
                    return state;
                }
            }
        }
        """;

    JsonNode Run(string members, string apply)
    {
        _host.CompileAndLoad("ordinary", new[] { new SourceFile("Ordinary.cs", Reducer(members, apply)) });
        var r = _host.Apply("ordinary", "Ordinary.CounterReducer", (null, Events.Array(Events.Make("Ticked", new { }), Events.Make("Ticked", new { })))).Single()!;
        Assert.True(r["ok"]!.GetValue<bool>(), r.ToJsonString());
        return r["states"]![1]!;
    }

    [Theory]
    [InlineData("generic method", "static class Factory { public static T Make<T>() where T : new() => new T(); }", "state.Value += Factory.Make<Made>().Hits;")]
    [InlineData("generic type", "sealed class Pool<T> where T : new() { public T Fresh() => new T(); }", "state.Value += new Pool<Made>().Fresh().Hits;")]
    [InlineData("struct constraint", "static class Factory { public static T Make<T>() where T : struct => new T(); }", "state.Value += Factory.Make<Pair>().A + 7;")]
    [InlineData("in a lambda", "static class Factory { public static T Make<T>() where T : new() { Func<T> f = () => new T(); return f(); } }", "state.Value += Factory.Make<Made>().Hits;")]
    [InlineData("in a local function", "static class Factory { public static T Make<T>() where T : new() { return L(); static T L() => new T(); } }", "state.Value += Factory.Make<Made>().Hits;")]
    [InlineData("in an iterator", "static class Factory { public static IEnumerable<T> Many<T>(int n) where T : new() { for (var i = 0; i < n; i++) yield return new T(); } }", "foreach (var m in Factory.Many<Made>(1)) state.Value += m.Hits;")]
    [InlineData("nested in a generic type", "sealed class Outer<T> where T : new() { public sealed class Inner { public T Fresh() => new T(); } }", "state.Value += new Outer<Made>.Inner().Fresh().Hits;")]
    [InlineData("a framework type", "static class Factory { public static T Make<T>() where T : new() => new T(); }", "state.Value += Factory.Make<List<int>>().Count + 7;")]
    public void NewTUnderANewConstraintCompilesAndRuns(string shape, string members, string apply)
    {
        var state = Run(members, apply);
        Assert.True(state["value"]!.GetValue<int>() == 14, $"{shape}: {state.ToJsonString()}");
    }

    [Theory]
    [InlineData("a concrete type", "_ = Activator.CreateInstance<Made>();")]
    [InlineData("by Type", "_ = Activator.CreateInstance(typeof(Made));")]
    [InlineData("an unconstrained parameter", "_ = Make<Made>(); static T Make<T>() => Activator.CreateInstance<T>();")]
    [InlineData("a class-constrained parameter", "_ = Make<Made>(); static T Make<T>() where T : class => Activator.CreateInstance<T>();")]
    [InlineData("as a delegate", "_ = Make<Made>(); static T Make<T>() where T : new() { Func<T> f = Activator.CreateInstance<T>; return f(); }")]
    public void ActivatorByHandStaysRefused(string shape, string apply)
    {
        var result = _host.Compile("Ordinary.cs", Reducer("", apply));
        Assert.False(result["ok"]!.GetValue<bool>(), shape);
        Assert.Contains("forbidden API: System.Activator.CreateInstance", result["compilationError"]!.GetValue<string>());
    }

    [Theory]
    [InlineData("Regex", "static readonly Regex Digits = new(\"[0-9]+\");", "state.Value += Digits.Match(\"ab7\").Value == \"7\" ? 7 : 0;")]
    [InlineData("ImmutableArray<string>", "static readonly ImmutableArray<string> Names = ImmutableArray.Create(\"a\", \"bb\");", "state.Value += Names.Sum(n => n.Length) * 7 / 3;")]
    [InlineData("ImmutableList<ImmutableArray<int>>", "static readonly ImmutableList<ImmutableArray<int>> Rows = ImmutableList.Create(ImmutableArray.Create(3, 4));", "state.Value += Rows[0].Sum();")]
    [InlineData("FrozenDictionary<string, int>", "static readonly FrozenDictionary<string, int> Prices = new Dictionary<string, int> { [\"a\"] = 7 }.ToFrozenDictionary(StringComparer.OrdinalIgnoreCase);", "state.Value += Prices[\"A\"];")]
    [InlineData("FrozenSet<string>", "static readonly FrozenSet<string> Known = new[] { \"x\" }.ToFrozenSet();", "state.Value += Known.Contains(\"x\") ? 7 : 0;")]
    [InlineData("ImmutableSortedDictionary<int, string>", "static readonly ImmutableSortedDictionary<int, string> Names = ImmutableSortedDictionary.Create<int, string>().Add(7, \"seven\");", "state.Value += Names.Keys.First();")]
    [InlineData("an enum-keyed ImmutableDictionary", "enum Kind { A } static readonly ImmutableDictionary<Kind, decimal> Rates = ImmutableDictionary<Kind, decimal>.Empty.Add(Kind.A, 7m);", "state.Value += (int)Rates[Kind.A];")]
    public void StaticReadonlyImmutableFieldsCompileAndRun(string type, string field, string apply)
    {
        var state = Run($"static class Holder {{ {field.Replace("static readonly", "public static readonly")} }}".Replace("enum Kind", "public enum Kind"),
            apply.Replace("Digits", "Holder.Digits").Replace("Names", "Holder.Names").Replace("Rows", "Holder.Rows").Replace("Prices", "Holder.Prices")
                 .Replace("Known", "Holder.Known").Replace("Rates", "Holder.Rates").Replace("Kind.A", "Holder.Kind.A"));
        Assert.True(state["value"]!.GetValue<int>() == 14, $"{type}: {state.ToJsonString()}");
    }

    [Theory]
    [InlineData("List<int>", "public static readonly List<int> Seen = new();", 16)]
    [InlineData("ImmutableArray<List<int>>", "public static readonly ImmutableArray<List<int>> Seen = ImmutableArray.Create(new List<int>());", 16)]
    [InlineData("ImmutableArray<object>", "public static readonly ImmutableArray<object> Seen = ImmutableArray.Create<object>(new List<int>());", 16)]
    [InlineData("an auto-property", "public static ImmutableArray<int[]> Seen { get; } = ImmutableArray.Create<int[]>(new int[1]);", 16)]
    [InlineData("a static mutable field", "public static int Seen;", 16)]
    public void RefusedStaticFieldsAreReportedAtTheirDeclaration(string type, string field, int line)
    {
        var source = Reducer($"public static class Holder\n{{\n{field}\n}}", "");
        var result = _host.Compile("src/Ordinary.cs", source);
        Assert.False(result["ok"]!.GetValue<bool>(), type);
        var es0002 = result["diagnostics"]!.AsArray().SingleOrDefault(d => d!["id"]!.GetValue<string>() == "ES0002");
        Assert.True(es0002 is not null, $"{type}: {result["compilationError"]}");
        Assert.Equal("src/Ordinary.cs", es0002!["path"]!.GetValue<string>());
        Assert.True(es0002["line"]!.GetValue<int>() == line, $"{type}: {es0002.ToJsonString()}\n{source}");
    }

    [Fact]
    public void Sha256HashDataCompilesAndRunsDeterministically()
    {
        var state = Run("", "var h = System.Security.Cryptography.SHA256.HashData(System.Text.Encoding.UTF8.GetBytes(\"abc\")); state.Text = Convert.ToHexString(h); state.Value += 7;");
        Assert.Equal("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD", state["text"]!.GetValue<string>());
    }

    [Fact]
    public void XxHashOneShotCompilesAndRunsDeterministically()
    {
        var state = Run("", "var b = System.Text.Encoding.UTF8.GetBytes(\"abc\"); state.Text = Convert.ToHexString(System.IO.Hashing.XxHash64.Hash(b)) + \"/\" + System.IO.Hashing.XxHash3.HashToUInt64(b) + \"/\" + System.IO.Hashing.XxHash32.HashToUInt32(b) + \"/\" + System.IO.Hashing.XxHash128.HashToUInt128(b, 7) + \"/\" + Convert.ToHexString(System.IO.Hashing.XxHash64.Hash(Array.Empty<byte>())); state.Value += 7;");
        var b = System.Text.Encoding.UTF8.GetBytes("abc");
        var expected = Convert.ToHexString(System.IO.Hashing.XxHash64.Hash(b)) + "/" + System.IO.Hashing.XxHash3.HashToUInt64(b) + "/" + System.IO.Hashing.XxHash32.HashToUInt32(b)
                       + "/" + System.IO.Hashing.XxHash128.HashToUInt128(b, 7) + "/EF46DB3751D8E999"; // XXH64 of nothing, seed 0 (the reference vector)
        Assert.Equal(expected, state["text"]!.GetValue<string>());
    }

    [Theory]
    [InlineData("an instance", "var h = new System.IO.Hashing.XxHash64(); h.Append(new byte[1]); _ = h.GetCurrentHash();", "System.IO.Hashing.XxHash64")]
    [InlineData("a stream", "_ = System.IO.Hashing.XxHash3.Hash(new byte[1]); var h = new System.IO.Hashing.XxHash3(); h.Append(new System.IO.MemoryStream());", "System.IO")]
    [InlineData("another algorithm", "_ = System.IO.Hashing.Crc32.Hash(new byte[1]);", "System.IO.Hashing.Crc32")]
    public void OtherHashingStaysRefused(string shape, string apply, string refused)
    {
        var result = _host.Compile("Ordinary.cs", Reducer("", apply));
        Assert.False(result["ok"]!.GetValue<bool>(), shape);
        Assert.Contains("forbidden API: " + refused, result["compilationError"]!.GetValue<string>());
    }

    [Theory]
    [InlineData("an instance", "using var sha = System.Security.Cryptography.SHA256.Create(); _ = sha.ComputeHash(new byte[1]);", "System.Security.Cryptography.SHA256.Create")]
    [InlineData("another algorithm", "_ = System.Security.Cryptography.SHA512.HashData(new byte[1]);", "System.Security.Cryptography.SHA512")]
    [InlineData("incremental", "using var h = System.Security.Cryptography.IncrementalHash.CreateHash(System.Security.Cryptography.HashAlgorithmName.SHA256);", "System.Security.Cryptography.IncrementalHash")]
    public void OtherCryptographyStaysRefused(string shape, string apply, string refused)
    {
        var result = _host.Compile("Ordinary.cs", Reducer("", apply));
        Assert.False(result["ok"]!.GetValue<bool>(), shape);
        Assert.Contains("forbidden API: " + refused, result["compilationError"]!.GetValue<string>());
    }

    [Theory]
    [InlineData("an array", "int[] a = [3, 4]; state.Value += a.Sum() + 7;")]
    [InlineData("a List<T>", "List<int> a = [3, 4]; state.Value += a.Sum() + 7;")]
    [InlineData("an IEnumerable<T>", "IEnumerable<int> a = [3, 4]; state.Value += a.Sum() + 7;")]
    [InlineData("an IReadOnlyList<T>", "IReadOnlyList<int> a = [3, 4, state.Value]; state.Value += a[0] + a[1] + 7;")]
    [InlineData("an IReadOnlyCollection<T> of one", "IReadOnlyCollection<int> a = [7]; state.Value += a.Sum() + 7;")]
    [InlineData("an ICollection<T>", "ICollection<int> a = [3, 4]; state.Value += a.Sum() + 7;")]
    [InlineData("a spread", "int[] x = [3]; List<int> y = [4]; int[] a = [.. x, .. y]; state.Value += a.Sum() + 7;")]
    [InlineData("a spread into IEnumerable", "int[] x = [3]; IEnumerable<int> a = [.. x, 4]; state.Value += a.Sum() + 7;")]
    [InlineData("a Span<T>", "Span<int> a = [3, 4]; state.Value += a[0] + a[1] + 7;")]
    [InlineData("a ReadOnlySpan<T>", "ReadOnlySpan<int> a = [3, 4, state.Value]; state.Value += a[0] + a[1] + 7;")]
    [InlineData("an ImmutableArray<T>", "ImmutableArray<int> a = [3, 4]; state.Value += a.Sum() + 7;")]
    [InlineData("an ImmutableList<T>", "ImmutableList<int> a = [3, 4]; state.Value += a.Sum() + 7;")]
    [InlineData("an ImmutableHashSet<T>", "ImmutableHashSet<int> a = [3, 4]; state.Value += a.Sum() + 7;")]
    [InlineData("a HashSet<T>", "HashSet<int> a = [3, 4]; state.Value += a.Sum() + 7;")]
    [InlineData("a Dictionary via spread of pairs", "var d = new Dictionary<string, int> { [\"a\"] = 3 }; List<KeyValuePair<string, int>> a = [.. d, new(\"b\", 4)]; state.Value += a.Sum(p => p.Value) + 7;")]
    [InlineData("a string.Join params span", "state.Text = string.Join(\",\", [\"a\", \"b\"]); state.Value += 14;")]
    [InlineData("a params ReadOnlySpan", "state.Value += Sum(3, 4) + 7; static int Sum(params ReadOnlySpan<int> xs) { var t = 0; foreach (var x in xs) t += x; return t; }")]
    public void CollectionExpressionsCompileAndRun(string shape, string apply)
    {
        var result = _host.Compile("Ordinary.cs", Reducer("", apply.Replace("state.Value += 14;", "state.Value += 7;").Replace("+ 7;", ";")));
        Assert.True(result["ok"]!.GetValue<bool>(), $"{shape}: {result["compilationError"]}");
        var state = Run("", apply.Replace("+ 7;", ";").Replace("state.Value += 14;", "state.Value += 7;"));
        Assert.True(state["value"]!.GetValue<int>() == 14, $"{shape}: {state.ToJsonString()}");
    }

    [Fact]
    public void NoConstructibleTypeHasARefusedParameterlessConstructor()
    {
        // new T() runs T's parameterless constructor without naming it (no .ctor member reference to check): that is safe
        // only while no type the policy allows has a refused constructor. Today only the abstract delegate bases do.
        var deniedConstructors = ApiPolicy.Entries().Where(e => e.StartsWith("denied-member:", StringComparison.Ordinal) && e.EndsWith("::.ctor", StringComparison.Ordinal)).ToList();
        Assert.Equal(new[] { "denied-member:System.Delegate::.ctor", "denied-member:System.MulticastDelegate::.ctor" }, deniedConstructors.Order().ToArray());
        Assert.True(typeof(Delegate).IsAbstract && typeof(MulticastDelegate).IsAbstract);
    }

    [Fact]
    public void AStaticFieldOfAGenericTypeIsReportedAtItsDeclaration()
    {
        var result = _host.Compile("src/Ordinary.cs", Reducer("public static class Holder<T>\n{\npublic static readonly string Seen = \"x\";\n}", ""));
        var es0002 = result["diagnostics"]!.AsArray().Single(d => d!["id"]!.GetValue<string>() == "ES0002")!;
        Assert.Equal(16, es0002["line"]!.GetValue<int>());
    }
}
