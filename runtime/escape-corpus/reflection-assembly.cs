// expect: compile-error System.Reflection
// Walks the loaded assemblies through a Type.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var asm = e.GetType().Assembly;
            state.Value = asm.FullName ?? "";
            return state;
        }
    }
}
