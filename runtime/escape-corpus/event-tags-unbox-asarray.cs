// expect: compile-error ES0001: forbidden API: System.Runtime.InteropServices.ImmutableCollectionsMarshal.AsArray
// Issue 28: unbox Event.Tags to the ImmutableArray<string> behind it and take the array it wraps, to write into the
// tags every other projection handed the same event object sees.
// Outcome: the unboxing is a copy of an immutable struct (harmless); AsArray, the one way to its array, is refused.
using System.Collections.Immutable;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            if (e.Tags is ImmutableArray<string> tags)
            {
                var array = ImmutableCollectionsMarshal.AsArray(tags);
                if (array is { Length: > 0 }) array[0] = "forged";
            }
            state.Value = string.Join("|", e.Tags);
            return state;
        }
    }
}
