using System;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.Text.Json;

namespace EventSourcing
{
    /// <summary>One stored event, as handed to <c>Apply</c> and <c>ResolveKey</c>.</summary>
    public sealed class Event
    {
        private static readonly JsonElement EmptyObject = JsonDocument.Parse("{}").RootElement.Clone();
        // Boxed once: every event without tags hands out this one immutable, empty list.
        private static readonly IReadOnlyList<string> NoTags = ImmutableArray<string>.Empty;

        private readonly IReadOnlyList<string> _tags = NoTags;

        /// <summary>Unique id of the event.</summary>
        public string EventId { get; init; } = "";

        /// <summary>Id of the aggregate the event belongs to.</summary>
        public string AggregateId { get; init; } = "";

        /// <summary>Type of the aggregate the event belongs to (e.g. <c>account</c>).</summary>
        public string AggregateType { get; init; } = "";

        /// <summary>Event type (e.g. <c>MoneyDeposited</c>).</summary>
        public string EventType { get; init; } = "";

        /// <summary>Version of the aggregate after this event (1 for its first event).</summary>
        public long Version { get; init; }

        /// <summary>When the event was stored.</summary>
        public DateTimeOffset Timestamp { get; init; }

        /// <summary>The event's data (a JSON object).</summary>
        public JsonElement Data { get; init; } = EmptyObject;

        /// <summary>The event's metadata, or <c>null</c>.</summary>
        public JsonElement? Metadata { get; init; }

        /// <summary>The event's tags (docs/dcb.md), in the order appended; empty, never null, when it has none.</summary>
        /// <remarks>A private immutable copy of what was given (an <see cref="ImmutableArray{T}"/>): one event object may be
        /// handed to several projections, and no cast lets one of them change what the next one sees.</remarks>
        public IReadOnlyList<string> Tags
        {
            get => _tags;
            init => _tags = value is null || value.Count == 0 ? NoTags : ImmutableArray.CreateRange(value);
        }

        /// <summary>Correlation id, if any.</summary>
        public string? CorrelationId { get; init; }

        /// <summary>Causation id, if any.</summary>
        public string? CausationId { get; init; }

        /// <summary>Options the host hands in (one instance per loaded tenant assembly, so that
        /// the serializer's type cache does not keep unloaded tenant code alive).</summary>
        internal JsonSerializerOptions? SerializerOptions { get; init; }

        /// <summary>Reads <see cref="Data"/> as <typeparamref name="T"/> with web defaults
        /// (property names matched case-insensitively, camelCase).</summary>
        /// <exception cref="JsonException">The data does not fit <typeparamref name="T"/>.</exception>
        public T DataAs<T>()
        {
            // An event made outside the host (tenants' own tests, or tenant code that builds one) gets fresh options: a shared
            // instance would cache metadata for every T it ever saw, process-wide, keeping unloaded tenants' types alive and
            // their memory charged to nobody. Fresh options cost a metadata build per call; the host's events never take this path.
            var value = Data.Deserialize<T>(SerializerOptions ?? new JsonSerializerOptions(JsonSerializerDefaults.Web));
            if (value is null)
                throw new JsonException($"event {EventType} ({EventId}): data is null, expected {typeof(T).Name}");
            return value;
        }

        /// <inheritdoc />
        public override string ToString() => $"{EventType} #{Version} of {AggregateType}/{AggregateId} ({EventId})";
    }
}
