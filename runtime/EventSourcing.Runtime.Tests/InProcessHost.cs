using System.Text;
using System.Text.Json.Nodes;
using EventSourcing.Runtime.Compilation;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Tests;

/// <summary>Drives a <see cref="RequestDispatcher"/> in-process with the wire format (JSON bytes in and out).</summary>
public sealed class InProcessHost
{
    static InProcessHost() => HostSetup.ConfigureProcess();

    int _nextId = 1;

    public InProcessHost(HostMode mode = HostMode.All) => Dispatcher = new RequestDispatcher(mode);

    public RequestDispatcher Dispatcher { get; }

    /// <summary>Sends a request; returns the whole response envelope.</summary>
    public JsonObject Send(string type, JsonObject? payload = null)
    {
        var id = _nextId++;
        var request = new JsonObject { ["id"] = id, ["type"] = type, ["payload"] = payload ?? new JsonObject() };
        var response = Dispatcher.Handle(Encoding.UTF8.GetBytes(request.ToJsonString()));
        var span = response.Span;
        Assert.Equal((byte)'\n', span[^1]);
        Assert.Equal(-1, span[..^1].IndexOf((byte)'\n'));
        var envelope = JsonNode.Parse(span[..^1])!.AsObject();
        Assert.Equal(id, envelope["id"]!.GetValue<int>());
        return envelope;
    }

    /// <summary>Sends a batch; returns the payloads of its item lines (each checked to be one line with the batch's id)
    /// and the final envelope. <paramref name="onItem"/> runs as each item's line arrives, before the next item starts.</summary>
    public (List<JsonObject> Items, JsonObject Final) Batch(JsonArray items, Action<int>? onItem = null)
    {
        var lines = new List<JsonObject>();
        var id = _nextId;
        var started = 0;
        Dispatcher.ItemSink = line =>
        {
            var span = line.Span;
            Assert.Equal((byte)'\n', span[^1]);
            Assert.Equal(-1, span[..^1].IndexOf((byte)'\n'));
            var envelope = JsonNode.Parse(span[..^1])!.AsObject();
            Assert.Equal(id, envelope["id"]!.GetValue<int>());
            // First "started" (nothing else before it), then one line per item.
            if (envelope["type"]!.GetValue<string>() == "started")
            {
                Assert.Equal(0, started++ + lines.Count);
                return;
            }
            Assert.Equal("item", envelope["type"]!.GetValue<string>());
            lines.Add(envelope["payload"]!.AsObject());
            onItem?.Invoke(lines.Count - 1);
        };
        try
        {
            var final = Send("batch", new JsonObject { ["items"] = items });
            if (final["type"]!.GetValue<string>() == "result") Assert.Equal(1, started);
            return (lines, final);
        }
        finally
        {
            Dispatcher.ItemSink = null;
        }
    }

    /// <summary>Sends a request that must succeed; returns its result payload.</summary>
    public JsonObject Result(string type, JsonObject? payload = null)
    {
        var envelope = Send(type, payload);
        Assert.True(envelope["type"]!.GetValue<string>() == "result", "expected a result, got " + envelope.ToJsonString());
        return envelope["payload"]!.AsObject();
    }

    public JsonObject Compile(IEnumerable<SourceFile> files, string? kind = null)
    {
        var payload = new JsonObject
        {
            ["files"] = new JsonArray(files.Select(f => (JsonNode)new JsonObject { ["path"] = f.Path, ["content"] = f.Content }).ToArray()),
        };
        if (kind is not null) payload["kind"] = kind;
        return Result("compile", payload);
    }

    public JsonObject Compile(string path, string source, string? kind = null) => Compile(new[] { new SourceFile(path, source) }, kind);

    /// <summary>Compiles (must succeed) and loads under <paramref name="assemblyId"/>.</summary>
    public JsonObject CompileAndLoad(string assemblyId, IEnumerable<SourceFile> files)
    {
        var compiled = Compile(files);
        Assert.True(compiled["ok"]!.GetValue<bool>(), compiled["compilationError"]?.GetValue<string>());
        var loaded = Result("load", new JsonObject { ["assemblyId"] = assemblyId, ["assembly"] = compiled["assembly"]!.GetValue<string>() });
        Assert.True(loaded["ok"]!.GetValue<bool>());
        return compiled;
    }

    public JsonArray Apply(string assemblyId, string className, params (JsonNode? State, JsonArray Events)[] groups)
    {
        var payload = new JsonObject
        {
            ["assemblyId"] = assemblyId,
            ["className"] = className,
            ["groups"] = new JsonArray(groups.Select(g => (JsonNode)new JsonObject { ["state"] = g.State?.DeepClone(), ["events"] = g.Events.DeepClone() }).ToArray()),
        };
        var results = Result("apply", payload)["results"]!.AsArray();
        foreach (var r in results) ParseStates(r!.AsObject());
        return results;
    }

    /// <summary>The exact JSON texts of the states, as the host wrote them (before <see cref="Apply"/> parses them).</summary>
    public JsonArray ApplyRaw(string assemblyId, string className, params (JsonNode? State, JsonArray Events)[] groups)
    {
        var payload = new JsonObject
        {
            ["assemblyId"] = assemblyId,
            ["className"] = className,
            ["groups"] = new JsonArray(groups.Select(g => (JsonNode)new JsonObject { ["state"] = g.State?.DeepClone(), ["events"] = g.Events.DeepClone() }).ToArray()),
        };
        return Result("apply", payload)["results"]!.AsArray();
    }

    /// <summary>States travel as strings of JSON text (so no consumer's number type can change them); tests read them as nodes.</summary>
    public static void ParseStates(JsonObject result)
    {
        if (result["states"] is not JsonArray states) return;
        for (var i = 0; i < states.Count; i++)
            states[i] = JsonNode.Parse(states[i]!.GetValue<string>());
    }
}
