using System;
using System.Collections.Generic;
using System.Text.Json;

namespace EventSourcing.Testing
{
    /// <summary>Builds one <see cref="Event"/> as the host would hand it to <c>Apply</c>: the data goes through JSON with
    /// the host's options (so <c>new { amount = 5 }</c> arrives as <c>{"amount":5}</c>) and <see cref="Event.DataAs{T}"/>
    /// reads it with the host's options.</summary>
    public sealed class EventBuilder
    {
        static readonly DateTimeOffset DefaultTimestamp = new(2026, 1, 1, 0, 0, 0, TimeSpan.Zero);

        readonly string _eventType;
        string _aggregateType = "aggregate";
        string _aggregateId = "aggregate-1";
        string? _eventId;
        long _version = 1;
        DateTimeOffset _timestamp = DefaultTimestamp;
        object? _data;
        object? _metadata;
        string? _correlationId;
        string? _causationId;
        string[] _tags = Array.Empty<string>();

        EventBuilder(string eventType) => _eventType = eventType;

        /// <summary>Starts an event of the given type (e.g. <c>MoneyDeposited</c>).</summary>
        public static EventBuilder Of(string eventType) =>
            new(string.IsNullOrEmpty(eventType) ? throw new ArgumentException("an event needs a type", nameof(eventType)) : eventType);

        /// <summary>The aggregate the event belongs to.</summary>
        public EventBuilder For(string aggregateType, string aggregateId)
        {
            _aggregateType = aggregateType;
            _aggregateId = aggregateId;
            return this;
        }

        /// <summary>The event's data: any value the serializer writes as a JSON object (an anonymous object, a record),
        /// or a JSON string (<see cref="WithJson"/>).</summary>
        public EventBuilder WithData(object data)
        {
            _data = data;
            return this;
        }

        /// <summary>The event's data as JSON text.</summary>
        public EventBuilder WithJson(string json)
        {
            _data = JsonDocument.Parse(json).RootElement.Clone();
            return this;
        }

        /// <summary>The event's metadata.</summary>
        public EventBuilder WithMetadata(object metadata)
        {
            _metadata = metadata;
            return this;
        }

        /// <summary>The aggregate's version after this event (1 for its first event).</summary>
        public EventBuilder AtVersion(long version)
        {
            _version = version;
            return this;
        }

        /// <summary>When the event was stored (default 2026-01-01T00:00:00Z).</summary>
        public EventBuilder At(DateTimeOffset timestamp)
        {
            _timestamp = timestamp;
            return this;
        }

        /// <summary>The event id (default: derived from the aggregate and version, stable across runs).</summary>
        public EventBuilder WithId(string eventId)
        {
            _eventId = eventId;
            return this;
        }

        /// <summary>Correlation and causation ids.</summary>
        public EventBuilder CorrelatedWith(string? correlationId, string? causationId = null)
        {
            _correlationId = correlationId;
            _causationId = causationId;
            return this;
        }

        /// <summary>The event's tags (docs/dcb.md), in this order; replaces any given before.</summary>
        public EventBuilder WithTags(params string[] tags)
        {
            foreach (var t in tags ?? throw new ArgumentNullException(nameof(tags)))
                if (string.IsNullOrEmpty(t)) throw new ArgumentException("a tag is a non-empty string", nameof(tags));
            _tags = (string[])tags.Clone();
            return this;
        }

        /// <summary>The event's tags (docs/dcb.md), in this order; replaces any given before.</summary>
        public EventBuilder WithTags(IEnumerable<string> tags) => WithTags(new List<string>(tags).ToArray());

        /// <summary>The event, with its data read back from JSON as the host reads it.</summary>
        public Event Build() => Build(HostJson.CreateOptions());

        internal Event Build(JsonSerializerOptions options) => new()
        {
            EventId = _eventId ?? $"{_aggregateType}-{_aggregateId}-{_version}",
            AggregateId = _aggregateId,
            AggregateType = _aggregateType,
            EventType = _eventType,
            Version = _version,
            Timestamp = _timestamp,
            Data = ToElement(_data, options) ?? JsonDocument.Parse("{}").RootElement.Clone(),
            Metadata = ToElement(_metadata, options),
            CorrelationId = _correlationId,
            CausationId = _causationId,
            Tags = _tags,
            SerializerOptions = options,
        };

        static JsonElement? ToElement(object? value, JsonSerializerOptions options) => value switch
        {
            null => null,
            JsonElement element => element.Clone(),
            _ => JsonSerializer.SerializeToElement(value, value.GetType(), options),
        };

        /// <summary>Builds the event.</summary>
        public static implicit operator Event(EventBuilder builder) => builder.Build();
    }
}
