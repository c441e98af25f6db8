using System;
using EventSourcing;

namespace BankAccount
{
    // Event data shapes. Property names are matched case-insensitively ({"amount": 10} → Amount).
    public sealed record AccountOpened(string Owner);
    public sealed record MoneyDeposited(decimal Amount);
    public sealed record MoneyWithdrawn(decimal Amount);

    public sealed class AccountState
    {
        public string Owner { get; set; } = "";
        public decimal Balance { get; set; }
        public int Transactions { get; set; }
    }

    /// <summary>
    /// Aggregate type "account" (explicit here; without the attribute the class name less
    /// "Reducer", lower-cased, gives the same).
    /// Events are facts, but a reducer may still refuse one: throwing stops the fold at that
    /// event and the host reports it as APPLY_FAILED with the index of the event.
    /// </summary>
    [AggregateType("account")]
    public sealed class AccountReducer : IReducer<AccountState>
    {
        public AccountState Apply(AccountState state, Event e)
        {
            switch (e.EventType)
            {
                case "AccountOpened":
                    state.Owner = e.DataAs<AccountOpened>().Owner;
                    break;

                case "MoneyDeposited":
                {
                    var amount = e.DataAs<MoneyDeposited>().Amount;
                    if (amount <= 0) throw new ArgumentException($"deposit must be positive, got {amount}");
                    state.Balance += amount;
                    state.Transactions++;
                    break;
                }

                case "MoneyWithdrawn":
                {
                    var amount = e.DataAs<MoneyWithdrawn>().Amount;
                    if (amount > state.Balance)
                        throw new InvalidOperationException(
                            $"insufficient funds: balance {state.Balance}, withdrawal {amount}");
                    state.Balance -= amount;
                    state.Transactions++;
                    break;
                }

                // Unknown event types leave the state as it is.
            }
            return state;
        }
    }
}
