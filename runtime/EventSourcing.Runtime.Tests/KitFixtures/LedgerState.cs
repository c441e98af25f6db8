namespace EventSourcing.Runtime.Tests.KitFixtures;

public sealed class LedgerState
{
    public decimal Total { get; set; }
    public string Notes { get; set; } = "";
    // A non-public setter: System.Text.Json does not read it back, so the count restarts with every batch.
    public int AppliedSinceRead { get; private set; }
    // Calls on this reducer instance: the host makes one instance per batch.
    public int CallsOnInstance { get; set; }

    public void CountApply() => AppliedSinceRead++;
}
