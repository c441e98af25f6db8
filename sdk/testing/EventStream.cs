using System;
using System.Collections.Generic;

namespace EventSourcing.Testing
{
    /// <summary>Events of one aggregate in order: each <c>Next</c> takes the next version and a timestamp one
    /// minute after the last, as appends would.</summary>
    public sealed class EventStream
    {
        readonly string _aggregateType;
        readonly string _aggregateId;
        long _version;
        DateTimeOffset _timestamp = new(2026, 1, 1, 0, 0, 0, TimeSpan.Zero);

        /// <summary>A stream of the aggregate <paramref name="aggregateType"/>/<paramref name="aggregateId"/>, empty.</summary>
        public EventStream(string aggregateType, string aggregateId)
        {
            _aggregateType = aggregateType;
            _aggregateId = aggregateId;
        }

        /// <summary>The next event of this aggregate; <paramref name="configure"/> may set more (metadata, time…).</summary>
        public Event Next(string eventType, object? data = null, Func<EventBuilder, EventBuilder>? configure = null)
        {
            _version++;
            _timestamp = _timestamp.AddMinutes(1);
            var builder = EventBuilder.Of(eventType).For(_aggregateType, _aggregateId).AtVersion(_version).At(_timestamp);
            if (data is not null) builder.WithData(data);
            return (configure?.Invoke(builder) ?? builder).Build();
        }

        /// <summary>Several events of this aggregate, in order.</summary>
        public IReadOnlyList<Event> Next(params (string EventType, object? Data)[] events)
        {
            var list = new List<Event>(events.Length);
            foreach (var (type, data) in events) list.Add(Next(type, data));
            return list;
        }
    }
}
