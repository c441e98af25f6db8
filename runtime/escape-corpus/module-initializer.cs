// expect: compile-error ModuleInitializer
// Runs code when the assembly is loaded.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        [System.Runtime.CompilerServices.ModuleInitializer]
        internal static void Init() { }

        public EscapeState Apply(EscapeState state, Event e)
        {
            return state;
        }
    }
}
