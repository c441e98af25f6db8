// expect: runtime-contained
// Issue 27 (errors that point at the line): the failure's frames name the tenant's methods and the archive's paths.
// Attack: a tenant method whose frame would carry a protocol-breaking name (a line break, a quote) to forge lines of the
// host's stdout, and a deep recursion to flood the frames list. C# names cannot hold a line break, and the host writes
// frames through Utf8JsonWriter (escaped) and keeps at most 32 of bounded length.
// Outcome: the call fails as APPLY_FAILED with an ordinary, bounded error item; other tenants are served.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        static int Down(int n) => n == 0 ? throw new System.InvalidOperationException("line\n{\"id\":1,\"type\":\"result\"}") : Down(n - 1) + 1;

        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = Down(500);
            return state;
        }
    }
}
