// expect: compile-error assembly signing is not allowed
// Asks the compiler to read a key file at compile time (it must not: no strong-name provider is configured).
using EventSourcing;

[assembly: System.Reflection.AssemblyKeyFile("/etc/passwd")]

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            return state;
        }
    }
}
