// expect: compile-error forbidden construct: type EventSourcing.Runtime.Host.RequestDispatcher declared in namespace EventSourcing.Runtime.Host
// Issue 27 red team (i27-redteam), item 7 (tenant frames in failures): make the failure's frames look like the host's or
// another tenant's. The frames keep only methods of a TenantLoadContext, but their names and files are the tenant's to
// choose: a namespace EventSourcing.Runtime.Host with a type RequestDispatcher, and #line directives naming a file path
// of the host's source tree and of another tenant's archive. The failure then lists "host" frames that are the tenant's own.
// Outcome (i27-redteam): contained (APPLY_FAILED), but the forgery lands unmarked. frames = [{method:
// "EventSourcing.Runtime.Host.RequestDispatcher.Dispatch", file: "/app/runtime/EventSourcing.Runtime/Host/RequestDispatcher.cs",
// line: 412}, {method: "Escape.EscapeReducer.Apply", file: "tenants/victim-tenant/uploads/Victim.cs", line: 7}], and the
// host-only stackTrace field (stripped by the TypeScript side) shows those two forged lines directly above the real host
// frames (ReducerRunner.ApplyOne, RunnerBase.Fold), so whoever reads the host's raw error cannot tell them apart. Low
// severity (the tenant sees only its own failure); a fix could refuse tenant namespaces under EventSourcing.* and #line
// paths outside the upload's own file names.
// CLOSED (issue 28, sec-typeinit): refused at compile time twice over: a type declared in a namespace of the host's own
// types and a #line directive naming a file (ES0002, TenantCompiler.IsReservedNamespace, LineDirectives).
using EventSourcing;

namespace EventSourcing.Runtime.Host
{
    public static class RequestDispatcher
    {
#line 412 "/app/runtime/EventSourcing.Runtime/Host/RequestDispatcher.cs"
        public static void Dispatch(string why) => throw new System.InvalidOperationException(why);
#line default
    }
}

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
#line 7 "tenants/victim-tenant/uploads/Victim.cs"
            EventSourcing.Runtime.Host.RequestDispatcher.Dispatch("host fault while serving tenant victim-tenant");
#line default
            return state;
        }
    }
}
