namespace EventSourcing.Runtime.Tests.SpecFixtures;

/// <summary>One key per order line's SKU (IResolveKeys), each lane adding its own lines; a SKU with nothing left is removed.</summary>
public sealed class SkuSales : IProjection<Cart>, IResolveKeys<Cart>, IDeletableProjection<Cart>
{
    public string? ResolveKey(Event e) => null;

    public IReadOnlyList<string>? ResolveKeys(Event e) =>
        e.Data.TryGetProperty("lines", out var lines) ? lines.EnumerateArray().Select(l => l.GetProperty("sku").GetString()!).ToList() : null;

    public Cart Apply(Cart state, Event e) => throw new InvalidOperationException("lanes of an IResolveKeys projection apply with their key");

    public Cart Apply(string key, Cart state, Event e)
    {
        foreach (var line in e.Data.GetProperty("lines").EnumerateArray())
            if (line.GetProperty("sku").GetString() == key) state.Items += line.GetProperty("qty").GetInt32();
        return state;
    }

    public bool ShouldDelete(Cart state, Event e) => state.Items <= 0;
}
