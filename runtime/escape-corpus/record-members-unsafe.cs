// expect: compile-error ES0001: forbidden API: System.Runtime.CompilerServices.Unsafe.As
// Attack on the verifier (issue 10): Unsafe.As in a record's PrintMembers override, reached through ToString after a with-expression.
// Outcome: Records' members, generated or written, are checked like any method.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    public record Rec(object O) { protected virtual bool PrintMembers(System.Text.StringBuilder b) { b.Append(Unsafe.As<Box>(O).A); return true; } }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var r = new Rec("text") with { O = e.EventId }; state.Value = r.ToString();
            return state;
        }
    }
}
