using EventSourcing.Testing;

namespace Sample.Tests;

// Each Given/When is one batch, run as the service runs it: a new reducer, the state read back from its stored JSON.
public class SampleReducerTests
{
    readonly EventStream _stream = new("sample", "sample-1");

    [Fact]
    public void Deposits_add_up()
    {
        ReducerSpec<SampleReducer, SampleState>
            .Given(_stream.Next("Opened"), _stream.Next("Deposited", new { amount = 30 }))
            .When(_stream.Next("Deposited", new { amount = 12.5m }))
            .Then(state => Assert.Equal(42.5m, state.Balance));
    }

    [Fact]
    public void A_withdrawal_before_opening_fails()
    {
        var error = ReducerSpec<SampleReducer, SampleState>
            .Given()
            .When(_stream.Next("Withdrawn", new { amount = 1 }))
            .ThenFails<InvalidOperationException>();
        Assert.Equal("sample-1 is not open", error.Message);
    }

    [Fact]
    public void The_state_is_stored_as_camel_case_json()
    {
        var json = ReducerSpec<SampleReducer, SampleState>.Given(_stream.Next("Opened")).ThenJson();
        Assert.Equal("""{"opened":true,"balance":0}""", json);
    }
}
