// expect: runtime-contained
// Catastrophic backtracking: stopped by the host's default regex match timeout (RegexMatchTimeoutException → APPLY_FAILED), else by the deadline.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = System.Text.RegularExpressions.Regex.IsMatch(new string((char)97, 40) + "!", "^(a+)+$").ToString();
            return state;
        }
    }
}
