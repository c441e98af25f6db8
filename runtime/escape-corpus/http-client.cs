// expect: compile-error System.Net
// Makes an HTTP request.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            using var client = new System.Net.Http.HttpClient();
            state.Value = client.GetStringAsync("http://127.0.0.1/").Result;
            return state;
        }
    }
}
