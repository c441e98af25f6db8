extern alias testkit;

using EventSourcing.Runtime.Tests.SpecFixtures;
using testkit::EventSourcing.Testing;

namespace EventSourcing.Runtime.Tests;

/// <summary>The test kit's projection side (sdk/testing ProjectionSpec): removed keys, several keys per event,
/// !unresolved and the key limit, as the service applies them (test/e2e/open-carts, projection-keys, tenant-limits).</summary>
public sealed class ProjectionSpecTests
{
    static Event Cart(string cart, string type, long version) => EventBuilder.Of(type).For("cart", cart).AtVersion(version);

    static Event Order(string id, params (string Sku, int Qty)[] lines) =>
        EventBuilder.Of("OrderPlaced").For("order", id).WithData(new { lines = lines.Select(l => new { sku = l.Sku, qty = l.Qty }).ToArray() });

    [Fact]
    public void ARemovedKeyHasNoStateAndComesBackFromANewState()
    {
        var spec = ProjectionSpec<OpenCarts, Cart>.Given(Cart("cart-1", "ItemAdded", 1), Cart("cart-1", "CartCheckedOut", 2), Cart("cart-2", "ItemAdded", 1));
        spec.ThenDeleted("cart-1");
        Assert.Equal(["cart-2"], spec.ThenJson().Keys);
        var missing = Assert.Throws<KeyNotFoundException>(() => spec.Then("cart-1"));
        Assert.Contains("was removed", missing.Message);
        Assert.Throws<InvalidOperationException>(() => spec.ThenDeleted("cart-2"));

        // Opened again, in the same batch or a later one: a new state, no longer removed.
        var again = ProjectionSpec<OpenCarts, Cart>.Given(Cart("cart-1", "ItemAdded", 1), Cart("cart-1", "CartCheckedOut", 2), Cart("cart-1", "ItemAdded", 3));
        Assert.Equal(1, again.Then("cart-1").Items);
        var later = ProjectionSpec<OpenCarts, Cart>.Given(Cart("cart-1", "ItemAdded", 1), Cart("cart-1", "CartCheckedOut", 2)).When(Cart("cart-1", "ItemAdded", 3));
        Assert.Equal("{\"items\":1}", later.ThenJson()["cart-1"]);
        Assert.Throws<InvalidOperationException>(() => later.ThenDeleted("cart-1"));
    }

    [Fact]
    public void AnEventOfSeveralKeysUpdatesEachWithItsOwnKey()
    {
        var states = ProjectionSpec<SkuSales, Cart>.Given(Order("o-1", ("s-1", 2), ("s-2", 1), ("s-1", 3)), Order("o-2", ("s-2", -1))).When(Order("o-3", ("s-3", 4))).Then();
        Assert.Equal(["s-1", "s-3"], states.Keys.Order());
        Assert.Equal(5, states["s-1"].Items); // one lane, its two lines; the key listed twice counts once
        Assert.Equal(4, states["s-3"].Items);
        ProjectionSpec<SkuSales, Cart>.Given(Order("o-1", ("s-2", 1)), Order("o-2", ("s-2", -1))).ThenDeleted("s-2");
    }

    [Fact]
    public void AThrowingResolveKeyOrARefusedKeyIsHeldInUnresolvedAndTheOthersGoOn()
    {
        var spec = ProjectionSpec<OpenCarts, Cart>.Given(
            Cart("cart-1", "Boom", 1),
            Cart("!unresolved", "ItemAdded", 1),
            Cart(new string('x', 1025), "ItemAdded", 1),
            Cart("cart-2", "ItemAdded", 1));
        var held = spec.ThenUnresolved();
        Assert.Equal(["RESOLVE_FAILED", "INVALID_KEY", "KEY_TOO_LONG"], held.Select(h => h.Code));
        Assert.Contains("boom", held[0].Message);
        Assert.Equal(["cart-2"], spec.ThenJson().Keys);
        Assert.Contains("held in !unresolved", Assert.Throws<KeyNotFoundException>(() => spec.Then("cart-1")).Message);
        var skus = ProjectionSpec<SkuSales, Cart>.Given(Order("o-1", ("s-1", 1), ("", 1))).ThenUnresolved();
        Assert.Equal("INVALID_KEY", Assert.Single(skus).Code); // one refused key holds the whole event
    }

    [Fact]
    public void TheKeyLimitHoldsNewKeysPastItAndARemovedKeyFreesItsPlace()
    {
        var full = ProjectionSpec<OpenCarts, Cart>.Given(Cart("cart-1", "ItemAdded", 1), Cart("cart-2", "ItemAdded", 1), Cart("cart-3", "ItemAdded", 1), Cart("cart-1", "ItemAdded", 2))
            .WithKeyLimit(2);
        Assert.Equal(["cart-1", "cart-2"], full.ThenJson().Keys.Order());
        Assert.Equal(2, full.Then("cart-1").Items); // a known key goes on past the held one
        Assert.Equal("KEY_LIMIT", Assert.Single(full.ThenUnresolved()).Code);

        var freed = ProjectionSpec<OpenCarts, Cart>.Given(Cart("cart-1", "ItemAdded", 1), Cart("cart-2", "ItemAdded", 1))
            .When(Cart("cart-1", "CartCheckedOut", 2))
            .When(Cart("cart-3", "ItemAdded", 1), Cart("cart-1", "ItemAdded", 3))
            .WithKeyLimit(2);
        Assert.Equal(["cart-2", "cart-3"], freed.ThenJson().Keys.Order());
        var held = Assert.Single(freed.ThenUnresolved());
        Assert.Equal(("KEY_LIMIT", "cart-1"), (held.Code, held.Event.AggregateId)); // the removed key is a new key again

        var severalKeys = ProjectionSpec<SkuSales, Cart>.Given(Order("o-1", ("s-1", 1)), Order("o-2", ("s-1", 1), ("s-2", 1))).WithKeyLimit(1);
        Assert.Equal(1, severalKeys.Then("s-1").Items); // o-2 held whole: s-1's lane does not get it either
        Assert.Equal("KEY_LIMIT", Assert.Single(severalKeys.ThenUnresolved()).Code);
    }
}
