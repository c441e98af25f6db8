// expect: compile-error readonly field of a mutable type Escape.Spy._box in a JSON converter
// Issue 27 red team (i27-redteam): a converter's readonly fields may hold "converters or exceptions" (treated as immutable,
// AssemblyWalker.Definitions.IsImmutableReference). A framework System.Exception is not immutable: throwing it rewrites its
// stack trace. The converter is named by the generated context's [JsonSourceGenerationOptions(Converters = ...)], so the
// one instance lives in the static LineContext.Default for the life of the upload; each call throws _box from a recursion
// as deep as the counter and the next call reads the depth back from _box.StackTrace.
// FIXED (issue 27, after the red team): a readonly field of an exception type is no longer taken as immutable in kept
// types (AssemblyWalker.Definitions.IsImmutableReference), so this is refused at compile. Was a HOLE (found, i27-redteam): compiles and runs; four calls with identical input give state.Count 0,1,2,3 (one load, four
// applies through InProcessHost). Fix candidates: a framework exception is not immutable (its trace is rewritten by every
// throw), so refuse readonly System.*Exception fields in kept types, or refuse Exception.StackTrace.
using System;
using System.Text.Json;
using System.Text.Json.Serialization;
using EventSourcing;

namespace Escape
{
    public sealed class Line { public string Sku { get; set; } = ""; }

    public sealed class Spy : JsonConverter<Line>
    {
        readonly Exception _box = new InvalidOperationException("box");

        public override Line Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) { reader.Skip(); return new Line(); }

        public override void Write(Utf8JsonWriter writer, Line value, JsonSerializerOptions options)
        {
            var n = 0;
            foreach (var line in (_box.StackTrace ?? "").Split('\n'))
                if (line.Contains("Deep", StringComparison.Ordinal)) n++;
            try { Deep(_box, n + 1); } catch (InvalidOperationException) { }
            writer.WriteNumberValue(n);
        }

        // Not a tail call (the JIT turns tail recursion into a loop): each level is a frame in the trace.
        static int Deep(Exception ex, int depth)
        {
            if (depth <= 1) throw ex;
            return Deep(ex, depth - 1) + depth;
        }
    }

    [JsonSourceGenerationOptions(Converters = new[] { typeof(Spy) })]
    [JsonSerializable(typeof(Line))]
    internal partial class LineContext : JsonSerializerContext { }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = JsonSerializer.Serialize(new Line(), LineContext.Default.Line);
            state.Count = long.Parse(state.Value);
            return state;
        }
    }
}
