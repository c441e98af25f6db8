using System.Collections.Immutable;
using System.Reflection.Metadata;
using System.Reflection.PortableExecutable;
using System.Text;
using System.Text.Json.Nodes;
using EventSourcing.Runtime.Compilation;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Tests;

/// <summary>
/// Honest code that makes Roslyn use every trusted compiler shape compiles and runs (with both reference sets),
/// and each trusted shape is exact: the same API or a look-alike field written by the tenant, or a one-byte change
/// to a compiler helper, is refused.
/// </summary>
public class CompilerShapeTests
{
    /// <summary>Inline arrays, collection expressions, u8 literals, constant spans and arrays, string and span switches,
    /// stackalloc, lambdas, method groups, local functions, iterators, records, events, the field keyword, extension members,
    /// indexers (Roslyn adds [DefaultMember]), required members, nullable attributes.</summary>
    public const string KitchenSink = """
        using System;
        using System.Collections.Generic;
        using System.Collections.Immutable;
        using System.Diagnostics.CodeAnalysis;
        using System.Linq;
        using System.Runtime.CompilerServices;
        using EventSourcing;

        namespace Honest;

        [InlineArray(4)]
        public struct Four { private int _element; }

        public sealed record Line(string Sku, int Qty, decimal Price);

        public sealed record SinkState
        {
            public int Events { get; init; }
            public List<string> Log { get; init; } = [];
            public ImmutableArray<int> Kept { get; init; } = [];
            public decimal Total { get; init; }
        }

        public static class TextExtensions
        {
            extension(string s)
            {
                public string Shout => s.ToUpperInvariant() + "!";
            }
        }

        // An indexer (Roslyn adds [DefaultMember]), required members, nullable-flow attributes.
        public sealed class Grid
        {
            readonly int[] _cells = new int[4];
            public required string Name { get; init; }
            public Grid() { }
            [SetsRequiredMembers] public Grid(string name) => Name = name;
            public int this[int i] { get => _cells[i]; set => _cells[i] = value; }
            public static bool TryMake(string? name, [NotNullWhen(true)] out Grid? grid) { grid = name is null ? null : new Grid(name); return grid is not null; }
        }

        public sealed class Counter
        {
            public event EventHandler? Ticked;
            public int Ticks { get => field; private set => field = value; }
            public void Tick() { Ticks++; Ticked?.Invoke(this, EventArgs.Empty); }
            public static Counter operator +(Counter c, int n) { for (var i = 0; i < n; i++) c.Tick(); return c; }
            public static Counter operator checked +(Counter c, int n) { checked { for (var i = 0; i < n; i++) c.Tick(); } return c; }
        }

        public sealed class SinkReducer : IReducer<SinkState>
        {
            const string Separator = ",";
            static readonly decimal Vat = 0.2m;

            public SinkState Apply(SinkState state, Event e)
            {
                var log = new List<string>(state.Log);
                var lines = e.DataAs<List<Line>>();

                // Lambdas (cached delegates), a capturing lambda, a method group (cached), LINQ.
                var minQty = 1;
                var kept = lines.Where(l => l.Qty >= minQty).OrderBy(l => l.Sku, StringComparer.Ordinal).ToList();
                log.Add(string.Join(Separator, kept.Select(l => l.Sku).Select(Upper)));

                // Local functions, static and capturing; an iterator; a generic method with a lambda.
                static decimal LineTotal(Line l) => l.Qty * l.Price;
                decimal WithVat(decimal x) => x + x * Vat;
                var total = WithVat(kept.Sum(LineTotal));
                log.Add(string.Join(Separator, Evens(6)) + "|" + Twice(3, x => x * 2));

                // Collection expressions: list, array with spread, constant array, ImmutableArray, constant and variable spans, IEnumerable, params span.
                List<int> list = [1, 2, 3];
                int[] arr = [.. list, 4];
                int[] primes = [2, 3, 5, 7, 11, 13];
                ImmutableArray<int> keptCounts = [.. state.Kept, kept.Count];
                ReadOnlySpan<int> constants = [10, 20, 30];
                Span<int> variables = [list.Count, arr.Length, 0];
                IEnumerable<int> lazy = [5, list.Count];
                log.Add($"{arr.Sum()}:{primes[5]}:{constants[1]}:{variables[0] + variables[1]}:{lazy.Sum()}:{Count(1, 2, 3, 4)}");

                // An inline array: element refs with constant and variable indexes, spans, read-only access, foreach.
                var four = new Four();
                four[0] = 5;
                for (var i = 1; i < 4; i++) four[i] = four[i - 1] + 1;
                four[3] = four[3] * 1;
                Span<int> fourSpan = four;
                log.Add($"{Sum(four)}:{fourSpan[1..3].Length}:{Ends(four)}:{At(four, 1)}");

                // UTF-8 literal, stackalloc, string switch, span switch.
                ReadOnlySpan<byte> utf8 = "héllo"u8;
                Span<char> buffer = stackalloc char[8];
                "abc".AsSpan().CopyTo(buffer);
                var kind = e.EventType switch { "Placed" => 1, "Paid" => 2, "Shipped" => 3, "Cancelled" => 4, "Returned" => 5, "Lost" => 6, "Found" => 7, _ => 0 };
                var spanKind = buffer[..3] switch { "abc" => "span", "def" => "d", "ghi" => "g", "jkl" => "j", "mno" => "m", "pqr" => "p", "stu" => "s", _ => "?" };
                log.Add($"{utf8.Length}:{kind}:{spanKind}");

                // Records and with, tuples, ranges, an extension member, the field keyword, an event, a checked operator.
                var first = kept[0] with { Qty = 3 };
                var (sku, qty) = (first.Sku, first.Qty);
                var counter = new Counter();
                var ticked = 0;
                counter.Ticked += (_, _) => ticked++;
                counter = checked(counter + 2);
                counter += 1;
                var cells = Grid.TryMake("g", out var grid) ? grid : new Grid { Name = "none" };
                cells[2] = 9;
                log.Add($"{sku.Shout}:{qty}:{counter.Ticks}:{ticked}:{"sink"[1..^1]}:{cells.Name}{cells[2]}");

                return state with { Events = state.Events + 1, Log = log, Kept = keptCounts, Total = state.Total + total };
            }

            static string Upper(string s) => s.ToUpperInvariant();
            static int Count(params ReadOnlySpan<int> xs) => xs.Length;
            static T Twice<T>(T value, Func<T, T> f) => f(value);
            static int Sum(in Four four) { var sum = 0; foreach (var x in four) sum += x; return sum; }
            static int Ends(in Four four) => four[0] + four[3];
            static int At(in Four four, int i) => four[i];

            static IEnumerable<int> Evens(int below)
            {
                for (var i = 0; i < below; i++)
                    if (i % 2 == 0) yield return i;
            }
        }
        """;

    static JsonArray SinkEvents()
    {
        var lines = new object[] { new { sku = "b", qty = 2, price = 1.5m }, new { sku = "a", qty = 1, price = 10m }, new { sku = "c", qty = 0, price = 3m } };
        return Events.Array(Events.Make("Placed", lines), Events.Make("Paid", lines, version: 2));
    }

    static void AssertSinkStates(JsonArray results)
    {
        var r = results.Single()!;
        Assert.True(r["ok"]!.GetValue<bool>(), r.ToJsonString());
        var states = r["states"]!.AsArray();
        var once = new[] { "A,B", "0,2,4|6", "10:13:20:7:8:4", "26:2:13:6", "6:1:span", "A!:3:3:3:in:g9" };
        var twice = once.Concat(once.Select(l => l == "6:1:span" ? "6:2:span" : l)).ToArray();
        Assert.Equal(once, states[0]!["log"]!.AsArray().Select(n => n!.GetValue<string>()));
        Assert.Equal(twice, states[1]!["log"]!.AsArray().Select(n => n!.GetValue<string>()));
        Assert.Equal(2, states[1]!["events"]!.GetValue<int>());
        Assert.Equal(new[] { 2, 2 }, states[1]!["kept"]!.AsArray().Select(n => n!.GetValue<int>()));
        Assert.Equal(31.2m, states[1]!["total"]!.GetValue<decimal>()); // (1 × 10 + 2 × 1.5) × 1.2, twice
    }

    [Fact]
    public void KitchenSinkReducerCompilesAndRunsWithTheReferencePack()
    {
        var host = new InProcessHost(HostMode.All);
        host.CompileAndLoad("sink", new[] { new SourceFile("Sink.cs", KitchenSink) });
        AssertSinkStates(host.Apply("sink", "Honest.SinkReducer", (null, SinkEvents())));
    }

    [Fact]
    public void KitchenSinkReducerCompilesAndRunsAgainstSystemPrivateCoreLib()
    {
        // Here Roslyn also uses CollectionsMarshal (List collection expressions) and Interlocked (field-like events).
        var compiler = new TenantCompiler(ReferenceSet.LoadFrom(ReferenceSet.RuntimeDirectory, implementation: true));
        var result = compiler.Compile(new[] { new SourceFile("Sink.cs", KitchenSink) }, ImplementationKind.Reducer);
        Assert.True(result.Ok, result.ErrorText);
        var calls = MemberNames(result.Assembly!);
        Assert.Contains("System.Runtime.InteropServices.CollectionsMarshal::SetCount", calls);
        Assert.Contains("System.Threading.Interlocked::CompareExchange", calls);

        var host = new InProcessHost(HostMode.All);
        var loaded = host.Result("load", new JsonObject { ["assemblyId"] = "sink-corelib", ["assembly"] = Convert.ToBase64String(result.Assembly!) });
        Assert.True(loaded["ok"]!.GetValue<bool>(), loaded.ToJsonString());
        AssertSinkStates(host.Apply("sink-corelib", "Honest.SinkReducer", (null, SinkEvents())));
    }

    [Fact]
    public void KitchenSinkExercisesEveryTrustedShape()
    {
        var image = Compile(KitchenSink);
        var calls = MemberNames(image);
        using var pe = new PEReader(ImmutableArray.Create(image));
        var md = pe.GetMetadataReader();
        var helpers = md.TypeDefinitions.Select(md.GetTypeDefinition)
            .Where(t => md.GetString(t.Name) == "<PrivateImplementationDetails>")
            .SelectMany(t => t.GetMethods().Select(m => md.GetString(md.GetMethodDefinition(m).Name)))
            .ToHashSet();
        foreach (var helper in new[] { "InlineArrayAsSpan", "InlineArrayAsReadOnlySpan", "InlineArrayElementRef", "InlineArrayElementRefReadOnly", "InlineArrayFirstElementRef", "InlineArrayFirstElementRefReadOnly" })
            Assert.Contains(helper, helpers);
        Assert.Contains("System.Environment::get_CurrentManagedThreadId", calls);
        Assert.Contains("System.Runtime.CompilerServices.RuntimeHelpers::CreateSpan", calls);
        Assert.Contains("System.Runtime.CompilerServices.RuntimeHelpers::InitializeArray", calls);
        Assert.Contains("System.Runtime.InteropServices.ImmutableCollectionsMarshal::AsImmutableArray", calls);
        var fields = md.FieldDefinitions.Select(md.GetFieldDefinition).ToList();
        Assert.Contains(fields, f => (f.Attributes & System.Reflection.FieldAttributes.HasFieldRVA) != 0);
        Assert.Contains(fields, f => md.GetString(f.Name) == "<>9");
        Assert.Contains(fields, f => md.GetString(f.Name).StartsWith("<>9__", StringComparison.Ordinal));
        Assert.Contains(fields, f => md.GetString(f.Name).StartsWith("<0>__", StringComparison.Ordinal)); // <>O method-group cache
    }

    [Fact]
    public void TheExamplesStillCompile()
    {
        var host = new InProcessHost(HostMode.Compile);
        foreach (var example in Directory.GetDirectories(Repo.Examples).Select(Path.GetFileName))
        {
            var result = host.Compile(Repo.Example(example!));
            Assert.True(result["ok"]!.GetValue<bool>(), $"{example}: {result["compilationError"]}");
        }
    }

    // ---- each trusted shape is exact ----

    [Fact]
    public void AOneByteChangeToAnInlineArrayHelperMakesItTenantCode()
    {
        var image = Compile(KitchenSink);
        Assert.Empty(AssemblyVerifier.Verify(image));
        // InlineArrayAsSpan is `ldarg.0; call Unsafe.As; ldarg.1; call MemoryMarshal.CreateSpan; ret`: make the length a constant 8.
        var patched = PatchHelperBody(image, "InlineArrayAsSpan", ilOffset: 6, from: 0x03 /* ldarg.1 */, to: 0x1E /* ldc.i4.8 */);
        var violations = AssemblyVerifier.Verify(patched).Select(v => v.Message).ToList();
        Assert.Contains(violations, m => m.Contains("System.Runtime.CompilerServices.Unsafe.As (unsafe memory access is not allowed)", StringComparison.Ordinal));
        Assert.Contains(violations, m => m.Contains("System.Runtime.InteropServices.MemoryMarshal.CreateSpan", StringComparison.Ordinal));
    }

    [Fact]
    public void TheSameHelperInATypeOfAnotherNameIsTenantCode()
    {
        var image = Compile(KitchenSink);
        var patched = ReplaceAscii(image, "<PrivateImplementationDetails>", "<PrivateImplementationDetailz>");
        var violations = AssemblyVerifier.Verify(patched).Select(v => v.Message).ToList();
        Assert.Contains(violations, m => m.Contains("System.Runtime.CompilerServices.Unsafe.As", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData("returned", "public int M() => System.Environment.CurrentManagedThreadId;")]
    [InlineData("stored and read back", "int _id; public C() { _id = System.Environment.CurrentManagedThreadId; } public int M() => _id;")]
    [InlineData("compared with ceq", "int _id; public C() { _id = System.Environment.CurrentManagedThreadId; } public bool M() => _id == System.Environment.CurrentManagedThreadId;")]
    [InlineData("in an iterator body", "public System.Collections.Generic.IEnumerable<int> M() { yield return System.Environment.CurrentManagedThreadId; }")]
    public void TheThreadIdIsRefusedUnlessItOnlyDecidesAnIteratorsReuse(string how, string members)
    {
        var result = CompileClass(members);
        Assert.False(result.Ok, how);
        Assert.Contains("forbidden API: System.Environment.CurrentManagedThreadId", result.ErrorText);
    }

    [Theory]
    [InlineData("a delegate cache that is also read elsewhere",
        "static System.Func<int>? _f; static int S() => 1; public bool M() { var fresh = _f is null; _f ??= new System.Func<int>(S); return fresh; }")]
    [InlineData("a cache holding a capturing delegate",
        "static System.Func<int>? _f; public int K; int I() => K; public void M() { _f ??= new System.Func<int>(I); }")]
    [InlineData("a singleton with state", "static readonly C Instance = new(); public int Calls; public int M() => ++Instance.Calls;")]
    [InlineData("a singleton of another type", "static readonly object Instance = new(); public object M() => Instance;")]
    [InlineData("an RVA-like readonly array", "static readonly int[] Data = { 1, 2, 3 }; public int M() => Data[0]++;")]
    public void LookAlikeStaticFieldsInTenantCodeAreRefused(string how, string members)
    {
        var result = CompileClass(members);
        Assert.False(result.Ok, how);
        Assert.Contains("forbidden construct: static", result.ErrorText);
    }

    [Fact]
    public void ExplicitLayoutIsRefusedWithFieldsWhateverTheTypeIsCalled()
    {
        const string source = """
            using System.Runtime.InteropServices;
            using EventSourcing;
            [StructLayout(LayoutKind.Explicit)] public struct Empty { }
            [StructLayout(LayoutKind.Explicit)] public struct Overlay { [FieldOffset(0)] public object O; [FieldOffset(0)] public long L; }
            public sealed class S { }
            public sealed class AReducer : IReducer<S> { public S Apply(S s, Event e) { var o = new Overlay(); _ = new Empty(); return s; } }
            """;
        var result = new TenantCompiler().Compile(new[] { new SourceFile("Layout.cs", source) }, ImplementationKind.Reducer);
        Assert.False(result.Ok);
        Assert.Contains("explicit struct layout on Overlay", result.ErrorText);
        Assert.DoesNotContain("explicit struct layout on Empty", result.ErrorText);
    }

    [Fact]
    public void TheCheckStaysLinearWhenAGenericTypeReachesManyOfItsOwnFields()
    {
        // Generic types reach their own fields through member references; resolving each by scanning the type's
        // fields took 9.7 s for these 20,000 (an 860 KB source), and grows with the square of the count.
        const int n = 20_000;
        var source = new StringBuilder("public sealed class G<T>\n{\n");
        for (var i = 0; i < n; i++) source.Append($"    public int F{i};\n");
        source.Append("    public int Sum() { var s = 0;\n");
        for (var i = 0; i < n; i++) source.Append($"        s += F{i};\n");
        source.Append("        return s; }\n}\npublic sealed class AReducer : EventSourcing.IReducer<int> { public int Apply(int s, EventSourcing.Event e) => new G<int>().Sum(); }\n");
        var image = Compile(source.ToString());
        var clock = System.Diagnostics.Stopwatch.StartNew();
        Assert.Empty(AssemblyVerifier.Verify(image));
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(4), $"verifying took {clock.Elapsed.TotalSeconds:0.0} s");
    }

    static CompileResult CompileClass(string members)
    {
        var source = $$"""
            namespace Probe;
            public sealed class C { {{members}} }
            public sealed class AReducer : EventSourcing.IReducer<int> { public int Apply(int s, EventSourcing.Event e) => s; }
            """;
        return new TenantCompiler().Compile(new[] { new SourceFile("C.cs", source) }, ImplementationKind.Reducer);
    }

    static byte[] Compile(string source)
    {
        var result = new TenantCompiler().Compile(new[] { new SourceFile("Sink.cs", source) }, ImplementationKind.Reducer);
        Assert.True(result.Ok, result.ErrorText);
        return result.Assembly!;
    }

    /// <summary>"Type::Member" for every member reference of an image.</summary>
    static HashSet<string> MemberNames(byte[] image)
    {
        using var pe = new PEReader(ImmutableArray.Create(image));
        var md = pe.GetMetadataReader();
        var names = new HashSet<string>(StringComparer.Ordinal);
        foreach (var h in md.MemberReferences)
        {
            var m = md.GetMemberReference(h);
            var parent = m.Parent;
            if (parent.Kind == HandleKind.TypeSpecification)
            {
                var reader = md.GetBlobReader(md.GetTypeSpecification((TypeSpecificationHandle)parent).Signature);
                if (reader.ReadSignatureTypeCode() != SignatureTypeCode.GenericTypeInstance) continue;
                reader.ReadByte();
                parent = reader.ReadTypeHandle();
            }
            if (parent.Kind != HandleKind.TypeReference) continue;
            var t = md.GetTypeReference((TypeReferenceHandle)parent);
            names.Add($"{md.GetString(t.Namespace)}.{md.GetString(t.Name)}::{md.GetString(m.Name)}".Replace("`1::", "::"));
        }
        return names;
    }

    static byte[] PatchHelperBody(byte[] image, string helper, int ilOffset, byte from, byte to)
    {
        using var pe = new PEReader(ImmutableArray.Create(image));
        var md = pe.GetMetadataReader();
        var method = md.MethodDefinitions.Select(md.GetMethodDefinition).Single(m => md.GetString(m.Name) == helper);
        var section = pe.PEHeaders.SectionHeaders.Single(s => method.RelativeVirtualAddress >= s.VirtualAddress && method.RelativeVirtualAddress < s.VirtualAddress + s.VirtualSize);
        var offset = method.RelativeVirtualAddress - section.VirtualAddress + section.PointerToRawData;
        Assert.Equal(0x2, image[offset] & 0x3); // tiny header: the IL follows one byte
        var at = offset + 1 + ilOffset;
        Assert.Equal(from, image[at]);
        var copy = (byte[])image.Clone();
        copy[at] = to;
        return copy;
    }

    static byte[] ReplaceAscii(byte[] image, string from, string to)
    {
        var a = Encoding.ASCII.GetBytes(from);
        var b = Encoding.ASCII.GetBytes(to);
        var copy = (byte[])image.Clone();
        var at = copy.AsSpan().IndexOf(a);
        Assert.True(at >= 0);
        b.CopyTo(copy, at);
        return copy;
    }
}
