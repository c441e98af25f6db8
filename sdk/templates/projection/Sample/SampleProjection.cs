using EventSourcing;

namespace Sample;

/// <summary>The state of one key (here: one customer); the service stores it as JSON (camelCase) after every event.</summary>
public sealed class SampleState
{
    public int Orders { get; set; }
    public decimal Spent { get; set; }
}

/// <summary>The data of an OrderPlaced event, e.g. <c>{"customerId": "c-1", "total": 25}</c>.</summary>
public sealed record OrderPlaced(string CustomerId, decimal Total);

/// <summary>Totals per customer over the events of every aggregate. Its name is the class name
/// (or [ProjectionName("…")]).</summary>
public sealed class SampleProjection : IProjection<SampleState>
{
    /// <summary>The key an event updates, or null when the event is not this projection's.</summary>
    public string? ResolveKey(Event e) => e.EventType == "OrderPlaced" ? e.DataAs<OrderPlaced>().CustomerId : null;

    public SampleState Apply(SampleState state, Event e)
    {
        state.Orders++;
        state.Spent += e.DataAs<OrderPlaced>().Total;
        return state;
    }
}
