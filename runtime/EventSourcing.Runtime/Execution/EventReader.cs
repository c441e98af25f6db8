using System.Collections.Immutable;
using System.Globalization;
using System.Text.Json;

namespace EventSourcing.Runtime.Execution;

/// <summary>
/// Reads the wire form of an event:
/// <c>{eventId, aggregateId, aggregateType, eventType, version, timestamp (ISO string), data (object), metadata (object|null), correlationId, causationId, tags (array of strings; absent or null: none)}</c>.
/// <c>Data</c>/<c>Metadata</c> point into the request's JsonDocument (valid until the response is written).
/// </summary>
public static class EventReader
{
    static readonly JsonElement EmptyObject = JsonDocument.Parse("{}").RootElement.Clone();

    public static Event Read(JsonElement element, JsonSerializerOptions options)
    {
        if (element.ValueKind != JsonValueKind.Object) throw new FormatException("an event must be a JSON object");
        string? eventId = null, aggregateId = null, aggregateType = null, eventType = null, correlationId = null, causationId = null;
        long version = 0;
        DateTimeOffset timestamp = default;
        JsonElement data = EmptyObject;
        JsonElement? metadata = null;
        ImmutableArray<string> tags = ImmutableArray<string>.Empty;

        foreach (var p in element.EnumerateObject())
        {
            var v = p.Value;
            if (p.NameEquals("eventId"u8)) eventId = String(v, "eventId");
            else if (p.NameEquals("aggregateId"u8)) aggregateId = String(v, "aggregateId");
            else if (p.NameEquals("aggregateType"u8)) aggregateType = String(v, "aggregateType");
            else if (p.NameEquals("eventType"u8)) eventType = String(v, "eventType");
            else if (p.NameEquals("version"u8)) version = Version(v);
            else if (p.NameEquals("timestamp"u8)) timestamp = Timestamp(v);
            else if (p.NameEquals("data"u8)) data = v.ValueKind is JsonValueKind.Null or JsonValueKind.Undefined ? EmptyObject : v;
            else if (p.NameEquals("metadata"u8)) metadata = v.ValueKind is JsonValueKind.Null or JsonValueKind.Undefined ? null : v;
            else if (p.NameEquals("correlationId"u8)) correlationId = String(v, "correlationId");
            else if (p.NameEquals("causationId"u8)) causationId = String(v, "causationId");
            else if (p.NameEquals("tags"u8)) tags = Tags(v);
        }

        return new Event
        {
            EventId = eventId ?? "",
            AggregateId = aggregateId ?? "",
            AggregateType = aggregateType ?? "",
            EventType = eventType ?? throw new FormatException("event has no eventType"),
            Version = version,
            Timestamp = timestamp,
            Data = data,
            Metadata = metadata,
            CorrelationId = correlationId,
            CausationId = causationId,
            Tags = tags,
            SerializerOptions = options,
        };
    }

    static string? String(JsonElement v, string name) => v.ValueKind switch
    {
        JsonValueKind.String => v.GetString(),
        JsonValueKind.Null or JsonValueKind.Undefined => null,
        JsonValueKind.Number => v.GetRawText(),
        _ => throw new FormatException($"event field {name} must be a string"),
    };

    static ImmutableArray<string> Tags(JsonElement v)
    {
        if (v.ValueKind is JsonValueKind.Null or JsonValueKind.Undefined) return ImmutableArray<string>.Empty;
        if (v.ValueKind != JsonValueKind.Array) throw new FormatException("event field tags must be an array of strings");
        var b = ImmutableArray.CreateBuilder<string>(v.GetArrayLength());
        foreach (var t in v.EnumerateArray())
            b.Add(t.ValueKind == JsonValueKind.String ? t.GetString()! : throw new FormatException("event field tags must be an array of strings"));
        return b.MoveToImmutable();
    }

    static long Version(JsonElement v) => v.ValueKind switch
    {
        JsonValueKind.Number when v.TryGetInt64(out var n) => n,
        JsonValueKind.String when long.TryParse(v.GetString(), NumberStyles.Integer, CultureInfo.InvariantCulture, out var n) => n,
        JsonValueKind.Null => 0,
        _ => throw new FormatException("event field version must be an integer"),
    };

    static DateTimeOffset Timestamp(JsonElement v)
    {
        switch (v.ValueKind)
        {
            case JsonValueKind.String:
                if (v.TryGetDateTimeOffset(out var t)) return t;
                if (DateTimeOffset.TryParse(v.GetString(), CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal, out t)) return t;
                throw new FormatException($"event field timestamp is not an ISO 8601 date: {v.GetString()}");
            case JsonValueKind.Number when v.TryGetInt64(out var ms):
                return DateTimeOffset.FromUnixTimeMilliseconds(ms);
            case JsonValueKind.Null:
                return default;
            default:
                throw new FormatException("event field timestamp must be an ISO 8601 string");
        }
    }
}
