// expect: compile-error ES0001: forbidden API: System.Environment.CurrentManagedThreadId
// Attack on the verifier (issue 10): The iterator's thread-id store (ldarg.0; call; stfld) copied into a tenant class whose field is then read.
// Outcome: The id is trusted only in a field nothing reads except the iterator's reuse comparison.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    public sealed class Probe { int _id; public Probe() { _id = Environment.CurrentManagedThreadId; } public int Id => _id; }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = new Probe().Id;
            return state;
        }
    }
}
