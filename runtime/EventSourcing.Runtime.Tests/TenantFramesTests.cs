using System.Text.Json.Nodes;
using EventSourcing.Runtime.Host;
using EventSourcing.Runtime.Compilation;

namespace EventSourcing.Runtime.Tests;

/// <summary>A runtime failure points at the tenant's line: the embedded PDB gives file and line, and only the
/// tenant's own frames are reported (no host, SDK or framework frame).</summary>
public class TenantFramesTests
{
    readonly InProcessHost _host = new(HostMode.Exec | HostMode.Compile);

    // Line numbers matter below: the throw is on line 13 of Rules/Limits.cs, the call to it on line 9 of Reducer.cs,
    // and the lambda's throw on line 10 (inside a framework call: List.ForEach).
    const string ReducerSource = """
        using EventSourcing;
        namespace Frames;
        public sealed class S { public int N { get; set; } }
        public sealed class ThrowingReducer : IReducer<S>
        {
            public S Apply(S state, Event e)
            {
                if (e.EventType == "Direct")
                    Limits.Check(state.N + 100);
                if (e.EventType == "InLambda") new List<int> { 1 }.ForEach(i => throw new ArgumentException("from a lambda"));
                state.N++;
                return state;
            }
        }
        """;

    const string LimitsSource = """
        namespace Frames;

        static class Limits
        {
            // padding so that the throw is on a line of its own, far from 1



            public static void Check(int n)
            {
                if (n > 10)
                {
                    throw new InvalidOperationException($"over the limit: {n}");
                }
            }
        }
        """;

    JsonNode Fail(string eventType)
    {
        _host.CompileAndLoad("frames", [new SourceFile("Reducer.cs", ReducerSource), new SourceFile("Rules/Limits.cs", LimitsSource)]);
        var r = _host.Apply("frames", "Frames.ThrowingReducer", (null, Events.Array(Events.Make(eventType, new { })))).Single()!;
        Assert.False(r["ok"]!.GetValue<bool>());
        return r["error"]!;
    }

    [Fact]
    public void AThrowingReducerNamesTheTenantsFileAndLineAndNoHostFrame()
    {
        var error = Fail("Direct");
        Assert.Equal("APPLY_FAILED", error["code"]!.GetValue<string>());
        Assert.Equal("System.InvalidOperationException", error["exceptionType"]!.GetValue<string>());
        Assert.Equal("over the limit: 100", error["message"]!.GetValue<string>());
        var frames = error["frames"]!.AsArray();
        Assert.Equal(2, frames.Count);
        Assert.Equal("Frames.Limits.Check", frames[0]!["method"]!.GetValue<string>());
        Assert.Equal("Rules/Limits.cs", frames[0]!["file"]!.GetValue<string>());
        Assert.Equal(13, frames[0]!["line"]!.GetValue<int>());
        Assert.Equal("Frames.ThrowingReducer.Apply", frames[1]!["method"]!.GetValue<string>());
        Assert.Equal("Reducer.cs", frames[1]!["file"]!.GetValue<string>());
        Assert.Equal(9, frames[1]!["line"]!.GetValue<int>());
    }

    [Fact]
    public void FrameworkFramesBetweenTenantFramesAreLeftOut()
    {
        var error = Fail("InLambda");
        Assert.Equal("System.ArgumentException", error["exceptionType"]!.GetValue<string>());
        var frames = error["frames"]!.AsArray().Select(f => f!).ToList();
        Assert.True(frames.Count >= 2, error.ToJsonString());
        Assert.All(frames, f => Assert.Equal("Reducer.cs", f["file"]!.GetValue<string>()));
        Assert.All(frames, f => Assert.Equal(10, f["line"]!.GetValue<int>()));
        Assert.Equal("Frames.ThrowingReducer.Apply", frames[^1]["method"]!.GetValue<string>());
        // The stack held List.ForEach and the host's runner between and around them: none of it is reported.
        Assert.DoesNotContain(frames, f => f["method"]!.GetValue<string>().StartsWith("System.", StringComparison.Ordinal));
        Assert.DoesNotContain(frames, f => f["method"]!.GetValue<string>().StartsWith("EventSourcing.", StringComparison.Ordinal));
    }
}
