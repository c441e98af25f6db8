using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Compilation;

/// <summary>
/// Roslyn spends ~1 s JIT-compiling itself on the first compilation of a process. In compile mode the host
/// compiles a small built-in reducer on a background thread right after start, so the first tenant compile
/// finds Roslyn (mostly) warm. Disable with EVENTSOURCING_COMPILER_WARMUP=0.
/// </summary>
public static class CompilerWarmup
{
    const string Source = """
        using System;
        using System.Collections.Generic;
        using System.Linq;
        using EventSourcing;
        namespace Warmup;
        public sealed record Line(string Sku, int Qty, decimal Price);
        public sealed record WarmState { public List<Line> Lines { get; init; } = []; public decimal Total => Lines.Sum(l => l.Qty * l.Price); }
        [AggregateType("warmup")]
        public sealed class WarmReducer : IReducer<WarmState>
        {
            public WarmState Apply(WarmState s, Event e) => e.EventType switch
            {
                "Added" => s with { Lines = [.. s.Lines, e.DataAs<Line>()] },
                "Cleared" => new WarmState(),
                _ => throw new InvalidOperationException($"unknown {e.EventType}"),
            };
        }
        public sealed class WarmProjection : IProjection<Dictionary<string, int>>
        {
            public string? ResolveKey(Event e) => e.AggregateId;
            public Dictionary<string, int> Apply(Dictionary<string, int> s, Event e) { s[e.EventType] = s.GetValueOrDefault(e.EventType) + 1; return s; }
        }
        """;

    public static void Start()
    {
        var thread = new Thread(() =>
        {
            try
            {
                var result = new TenantCompiler().Compile(new[] { new SourceFile("Warmup.cs", Source) }, null);
                Log.Info($"compiler warm-up done (ok={result.Ok})");
            }
            catch (Exception ex)
            {
                Log.Error($"compiler warm-up failed: {ex.Message}");
            }
        })
        {
            IsBackground = true,
            Name = "compiler-warmup",
            Priority = ThreadPriority.BelowNormal,
        };
        thread.Start();
    }
}
