// expect: compile-error error CS1001
// Attack on the verifier (issue 10): A type named <PrivateImplementationDetails> spelled with unicode escapes, to pose as the compiler's helper class.
// Outcome: '<' is not an identifier character, escaped or not: the compiler refuses the name.
using EventSourcing;
namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    internal static class \u003CPrivateImplementationDetails\u003E
    {
        internal static System.Span<long> InlineArrayAsSpan(ref long b, int n) => System.Runtime.InteropServices.MemoryMarshal.CreateSpan(ref b, n);
    }
    public sealed class EscapeReducer : IReducer<EscapeState> { public EscapeState Apply(EscapeState state, Event e) => state; }
}
