// expect: compile-error forbidden construct: #line directive naming a file (tenants/victim-tenant/uploads/Victim.cs)
// Issue 28 (sec-typeinit), attacking the fix for exception-frames-forged-host.cs: keep to a namespace of one's own and forge
// only the file of the frame, with the span form of #line (C# 10) as well as the classic one.
// Outcome: every #line that names a file is refused; #line N, hidden and default stay allowed (the Default frame below).
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
#line 7 "tenants/victim-tenant/uploads/Victim.cs"
            if (e.EventType == "A") throw new System.InvalidOperationException("host fault while serving tenant victim-tenant");
#line (1, 1) - (1, 40) "/app/runtime/EventSourcing.Runtime/Host/RequestDispatcher.cs"
            if (e.EventType == "B") throw new System.InvalidOperationException("b");
#line 99
            if (e.EventType == "C") throw new System.InvalidOperationException("c");
#line hidden
            state.Count++;
#line default
            return state;
        }
    }
}
