using System.Text.Json;
using System.Text.Json.Nodes;

namespace EventSourcing.Runtime.Tests;

public static class Events
{
    static int _seq;

    public static JsonObject Make(string eventType, object data, string aggregateId = "agg-1", string aggregateType = "account", long version = 1)
    {
        var n = Interlocked.Increment(ref _seq);
        return new JsonObject
        {
            ["eventId"] = $"evt-{n}",
            ["aggregateId"] = aggregateId,
            ["aggregateType"] = aggregateType,
            ["eventType"] = eventType,
            ["version"] = version,
            ["timestamp"] = "2025-03-01T12:00:00.000Z",
            ["data"] = JsonSerializer.SerializeToNode(data),
            ["metadata"] = null,
            ["correlationId"] = "corr-1",
            ["causationId"] = null,
        };
    }

    public static JsonArray Array(params JsonObject[] events) => new(events.Select(e => (JsonNode)e).ToArray());
}
