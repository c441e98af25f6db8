// expect: compile-error error CS8168
// Attack on the verifier (issue 10): [UnscopedRef] (System.Diagnostics.CodeAnalysis is allowed) used to return a ref to a dead local.
// Outcome: C#'s ref-safety rules still apply to [UnscopedRef] members.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;
using System.Diagnostics.CodeAnalysis;
namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    public struct Cell { public long V; [UnscopedRef] public ref long Ref => ref V; }
    public static class Escaper { public static ref long Out() { var c = new Cell(); return ref c.Ref; } }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = Escaper.Out();
            return state;
        }
    }
}
