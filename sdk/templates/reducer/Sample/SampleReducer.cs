using EventSourcing;

namespace Sample;

/// <summary>The state of one aggregate; the service stores it as JSON (camelCase) after every event.</summary>
public sealed class SampleState
{
    public bool Opened { get; set; }
    public decimal Balance { get; set; }
}

/// <summary>The data of Deposited and Withdrawn events, e.g. <c>{"amount": 10}</c>.</summary>
public sealed record AmountData(decimal Amount);

/// <summary>Folds the events of aggregate type "sample" (the class name less "Reducer", lower-cased).</summary>
public sealed class SampleReducer : IReducer<SampleState>
{
    public SampleState Apply(SampleState state, Event e)
    {
        switch (e.EventType)
        {
            case "Opened":
                state.Opened = true;
                break;
            case "Deposited":
                state.Balance += e.DataAs<AmountData>().Amount;
                break;
            case "Withdrawn":
                if (!state.Opened) throw new InvalidOperationException($"{e.AggregateId} is not open");
                state.Balance -= e.DataAs<AmountData>().Amount;
                break;
        }
        return state;
    }
}
