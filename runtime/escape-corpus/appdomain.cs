// expect: compile-error System.AppDomain
// Enumerates loaded assemblies via AppDomain.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = System.AppDomain.CurrentDomain.GetAssemblies().Length;
            return state;
        }
    }
}
