// expect: compile-error System.Delegate.CreateDelegate
// Builds a delegate from reflection.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public static string Secret() => "x";

        public EscapeState Apply(EscapeState state, Event e)
        {
            var d = System.Delegate.CreateDelegate(typeof(System.Func<string>), typeof(EscapeReducer).GetMethod("Secret")!);
            state.Value = d.ToString() ?? "";
            return state;
        }
    }
}
