namespace EventSourcing.Runtime.Tests.SpecFixtures;

public sealed class Cart
{
    public int Items { get; set; }
}
