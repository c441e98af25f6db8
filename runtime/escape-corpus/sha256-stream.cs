// expect: compile-error System.IO.Stream
// Issue 27: SHA256.HashData is allowed over bytes and spans; its Stream overload would need a stream, and System.IO is refused.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = System.Convert.ToHexString(System.Security.Cryptography.SHA256.HashData(System.IO.Stream.Null));
            return state;
        }
    }
}
