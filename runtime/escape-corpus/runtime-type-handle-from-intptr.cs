// expect: compile-error ES0001: forbidden API: System.RuntimeTypeHandle.FromIntPtr
// A type handle made from a number: Type.GetTypeFromHandle would dereference it as a method table.
using System;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            Func<long, string> forge = address => Type.GetTypeFromHandle(RuntimeTypeHandle.FromIntPtr((nint)address))!.Name;
            state.Value = forge(0x1000 + e.Version);
            return state;
        }
    }
}
