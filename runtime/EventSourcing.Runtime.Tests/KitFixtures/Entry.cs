namespace EventSourcing.Runtime.Tests.KitFixtures;

public sealed record Entry(decimal Amount, string Note);
