namespace EventSourcing.Runtime.Tests.KitFixtures;

// Compiled into the tests AND sent to the host as tenant source (TestKitTests): the test kit must give the states
// the host gives. Each member is sensitive to one thing the host does.
public sealed record Entry(decimal Amount, string Note);

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

public sealed class KitLedgerReducer : IReducer<LedgerState>
{
    int _calls;

    public LedgerState Apply(LedgerState state, Event e)
    {
        var entry = e.DataAs<Entry>();
        if (entry.Amount < 0 && state.Total + entry.Amount < 0)
            throw new InvalidOperationException($"overdraft: total {state.Total}, entry {entry.Amount}");
        state.Total += entry.Amount;
        state.Notes += entry.Note;
        state.CountApply();
        state.CallsOnInstance = ++_calls;
        return state;
    }
}
