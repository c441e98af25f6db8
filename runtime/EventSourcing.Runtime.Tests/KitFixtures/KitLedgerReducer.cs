namespace EventSourcing.Runtime.Tests.KitFixtures;

// Compiled into the tests AND sent to the host as tenant source (TestKitTests): the test kit must give the states
// the host gives. Each member is sensitive to one thing the host does.
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
