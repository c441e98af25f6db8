// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.As
// Attack on the verifier (issue 10): Unsafe.As in a user-defined checked operator.
// Outcome: Operators are ordinary methods to the IL check.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    public readonly struct Money { public readonly long Cents; public Money(long c) => Cents = c;
        public static Money operator +(Money a, Money b) => new(a.Cents + b.Cents);
        public static Money operator checked +(Money a, Money b) => new(Unsafe.As<Box>((object)"text").A); }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = checked(new Money(1) + new Money(2)).Cents;
            return state;
        }
    }
}
