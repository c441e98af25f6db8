// expect: compile-error System.AppContext
// Changes process-wide switches.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            System.AppContext.SetSwitch("System.Globalization.Invariant", false);
            return state;
        }
    }
}
