// expect: compile-error ES0001: forbidden API: System.Exception.Data
// Red team (issue 10): a static readonly initializer that throws (here Guid.Parse) leaves the type failed for good, and the
// runtime rethrows the SAME TypeInitializationException (same inner exception) on every later use: its Data dictionary and
// HelpLink/Source setters counted 1, 2, 3 over separate apply requests.
// Outcome: Exception.Data, HelpLink and Source setters are refused.
using EventSourcing;

namespace Escape
{
    public static class Broken { public static readonly System.Guid G = System.Guid.Parse("not a guid"); }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            try
            {
                state.Value = Broken.G.ToString();
            }
            catch (System.TypeInitializationException ex)
            {
                var d = ex.InnerException!.Data;
                d["n"] = (d["n"] is int n ? n : 0) + 1;
                state.Count = (int)d["n"]!;
            }
            return state;
        }
    }
}
