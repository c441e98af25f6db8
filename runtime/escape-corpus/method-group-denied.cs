// expect: compile-error ES0001: forbidden API: System.IO.File.Exists
// Attack on the verifier (issue 10): A denied method reached as a method group (ldftn) and called through a delegate inside a lambda.
// Outcome: ldftn/ldvirtftn tokens are checked like calls.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            Func<string, bool> exists = System.IO.File.Exists; Func<bool> f = () => exists("/etc/passwd"); state.Count = f() ? 1 : 0;
            return state;
        }
    }
}
