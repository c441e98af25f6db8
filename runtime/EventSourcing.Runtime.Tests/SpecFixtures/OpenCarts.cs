namespace EventSourcing.Runtime.Tests.SpecFixtures;

/// <summary>Open carts: items counted per cart, a checked-out cart removed; a Boom event throws in ResolveKey.</summary>
public sealed class OpenCarts : IProjection<Cart>, IDeletableProjection<Cart>
{
    public string? ResolveKey(Event e) => e.EventType == "Boom" ? throw new InvalidOperationException("boom") : e.AggregateId;

    public Cart Apply(Cart state, Event e)
    {
        if (e.EventType == "ItemAdded") state.Items++;
        return state;
    }

    public bool ShouldDelete(Cart state, Event e) => e.EventType == "CartCheckedOut";
}
