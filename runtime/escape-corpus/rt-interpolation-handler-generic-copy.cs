// expect: compile-error ES0002: forbidden construct: System.Runtime.CompilerServices.DefaultInterpolatedStringHandler as a generic argument
// Red team (issue 10): the same double return, with the copy made inside a generic method (`allows ref struct`) and by a
// callee that receives the compiler's handler by reference.
using System.Runtime.CompilerServices;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        static T Copy<T>(scoped ref T x) where T : allows ref struct => x;

        static string Twice(ref DefaultInterpolatedStringHandler h)
        {
            var c = h;
            h.ToStringAndClear();
            return c.ToStringAndClear();
        }

        public EscapeState Apply(EscapeState state, Event e)
        {
            var h = new DefaultInterpolatedStringHandler(300, 0);
            var c = Copy(ref h);
            h.ToStringAndClear();
            c.ToStringAndClear();
            state.Value = Twice($"{e.EventId}");
            return state;
        }
    }
}
