using EventSourcing.Testing;

namespace Sample.Tests;

// Each Given/When is one batch, run as the service runs it: keys resolved, each key's events folded by a new
// projection instance, states read back from their stored JSON between batches.
public class SampleProjectionTests
{
    readonly EventStream _order1 = new("order", "order-1");
    readonly EventStream _order2 = new("order", "order-2");
    readonly EventStream _order3 = new("order", "order-3");

    [Fact]
    public void Totals_are_kept_per_customer()
    {
        var states = ProjectionSpec<SampleProjection, SampleState>
            .Given(_order1.Next("OrderPlaced", new { customerId = "c-1", total = 20 }), _order2.Next("OrderPlaced", new { customerId = "c-2", total = 5 }))
            .When(_order3.Next("OrderPlaced", new { customerId = "c-1", total = 2.5m }))
            .Then();
        Assert.Equal(2, states["c-1"].Orders);
        Assert.Equal(22.5m, states["c-1"].Spent);
        Assert.Equal(1, states["c-2"].Orders);
    }

    [Fact]
    public void Other_events_update_no_key()
    {
        var states = ProjectionSpec<SampleProjection, SampleState>.Given(_order1.Next("OrderCancelled", new { reason = "late" })).Then();
        Assert.Empty(states);
    }

    [Fact]
    public void The_state_is_stored_as_camel_case_json()
    {
        var json = ProjectionSpec<SampleProjection, SampleState>.Given(_order1.Next("OrderPlaced", new { customerId = "c-1", total = 3 })).ThenJson();
        Assert.Equal("""{"orders":1,"spent":3}""", json["c-1"]);
    }
}
