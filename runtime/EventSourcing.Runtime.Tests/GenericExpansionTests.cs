using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Tests;

/// <summary>Issue 22 red team: generic code that makes new types at run time without bound is refused
/// (AssemblyWalker.CheckGenericExpansion, escape-corpus/memory-generic-expansion.cs); ordinary generic code is not.</summary>
public class GenericExpansionTests
{
    static string Reducer(string members, string apply = "return s;") => $$"""
        using System;
        using System.Collections.Generic;
        using System.Linq;
        using EventSourcing;
        namespace G
        {
            public sealed class S { public long N { get; set; } }
            public sealed class Box<T> { public T? Value { get; set; } public Box<T> Self() => new Box<T> { Value = Value }; }
            public sealed class R : IReducer<S>
            {
                {{members}}
                public S Apply(S s, Event e) { {{apply}} }
            }
        }
        """;

    static string Refusal(string source)
    {
        var result = new InProcessHost(HostMode.Compile).Compile("G.cs", source);
        return result["ok"]!.GetValue<bool>() ? "" : result["compilationError"]!.GetValue<string>();
    }

    [Theory]
    [InlineData("static int F<T>(int n) => n == 0 ? 0 : F<List<T>>(n - 1);", "G.R.F<System.Collections.Generic.List`1<!!0>>")]
    [InlineData("static int F<T>(int n) => n == 0 ? 0 : F<T[]>(n - 1);", "G.R.F<!!0[]>")]
    [InlineData("static int F<T>(int n) => n == 0 ? 0 : F<Box<T>>(n - 1);", "G.R.F<G.Box`1<!!0>>")]
    [InlineData("static int F<T>(int n) => n == 0 ? 0 : F<(T, int)>(n - 1);", "G.R.F<System.ValueTuple`2<!!0, Int32>>")]
    [InlineData("sealed class Node<T> { public int Depth(int n) => n == 0 ? 0 : new Node<KeyValuePair<T, T>>().Depth(n - 1); }", "G.R+Node`1<System.Collections.Generic.KeyValuePair`2<!0, !0>>")]
    [InlineData("static Func<int, int> F<T>() => n => n == 0 ? 0 : F<List<T>>()(n - 1);", "G.R.F<System.Collections.Generic.List`1<!0>>")]
    public void PolymorphicRecursionIsRefused(string members, string shown)
    {
        var text = Refusal(Reducer(members));
        Assert.Contains("error ES0002: forbidden construct: generic expansion " + shown, text);
        Assert.Contains("polymorphic recursion", text);
    }

    [Theory]
    [InlineData("static int F<T>(int n) => n == 0 ? 0 : F<T>(n - 1);")]
    [InlineData("static int F<T>(T x) => 1; static int G<T>(T x) => F<List<int>>(new List<int>()) + F<Box<string>>(new Box<string>()) + F(x);")]
    [InlineData("static List<T> F<T>(IEnumerable<T> xs) => xs.Select(x => x).Where(x => x is not null).OrderBy(x => x).ToList();")]
    [InlineData("static Dictionary<T, List<T>> F<T>(T[] xs) where T : notnull => xs.GroupBy(x => x).ToDictionary(g => g.Key, g => g.ToList());")]
    [InlineData("static IEnumerable<T> F<T>(T x) { yield return x; } static Box<T> G<T>(T x) => new Box<T> { Value = x }.Self();")]
    public void OrdinaryGenericCodeIsNot(string members)
    {
        Assert.Equal("", Refusal(Reducer(members, "s.N++; return s;")));
    }
}
