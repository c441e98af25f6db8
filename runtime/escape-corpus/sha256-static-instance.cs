// expect: compile-error System.Security.Cryptography.SHA256.Create
// Issue 27: only the static one-shot SHA256.HashData is allowed. A SHA256 instance kept in a static field would carry its
// incremental state (TransformBlock) from one call to the next: both the instance and the field are refused.
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    internal static class Holder
    {
        public static readonly System.Security.Cryptography.SHA256 Running = System.Security.Cryptography.SHA256.Create();
    }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var b = System.Text.Encoding.UTF8.GetBytes(e.EventType);
            Holder.Running.TransformBlock(b, 0, b.Length, null, 0);
            return state;
        }
    }
}
