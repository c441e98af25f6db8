// expect: compile-error readonly field of a mutable type Escape.Hoard._e0 in a JSON converter
// Issue 27 red team (i27-redteam): memory nobody is charged for, through the same kept objects as
// cross-call-converter-kept-exception.cs. A tenant is charged what its load and preparation allocate; what a call allocates
// is the call's own, transient. But an exception held in a readonly field of a kept converter (the generated context's
// static Default keeps it for the life of the upload) takes a new stack trace every time it is thrown, allocated inside
// the call and retained after it: 48 such exceptions, each thrown from a recursion the event's data makes deep, keep
// depth x 48 frames of trace in the executor after the call returns, charged to nobody.
// FIXED (issue 27, after the red team): a readonly field of an exception type is no longer taken as immutable in kept
// types (AssemblyWalker.Definitions.IsImmutableReference), so this is refused at compile. Was a HOLE (found, i27-redteam): compiles and runs. Measured in-process (InProcessHost Exec+Compile, GC.GetTotalMemory(true)
// before and after one apply): load charged 35,912 bytes (80,896 after the call,
// preparation included); 61,467 KiB live after the call returned (control: 109 KiB), above
// the default 32 MiB per-tenant cap and charged to nobody. Deeper recursion or more fields scale it to the heap limit.
using System;
using System.Text.Json;
using System.Text.Json.Serialization;
using EventSourcing;

namespace Escape
{
    public sealed class Line { public int Depth { get; set; } }

    public sealed class Hoard : JsonConverter<Line>
    {
        readonly Exception _e0 = new InvalidOperationException("e0");
        readonly Exception _e1 = new InvalidOperationException("e1");
        readonly Exception _e2 = new InvalidOperationException("e2");
        readonly Exception _e3 = new InvalidOperationException("e3");
        readonly Exception _e4 = new InvalidOperationException("e4");
        readonly Exception _e5 = new InvalidOperationException("e5");
        readonly Exception _e6 = new InvalidOperationException("e6");
        readonly Exception _e7 = new InvalidOperationException("e7");
        readonly Exception _e8 = new InvalidOperationException("e8");
        readonly Exception _e9 = new InvalidOperationException("e9");
        readonly Exception _e10 = new InvalidOperationException("e10");
        readonly Exception _e11 = new InvalidOperationException("e11");
        readonly Exception _e12 = new InvalidOperationException("e12");
        readonly Exception _e13 = new InvalidOperationException("e13");
        readonly Exception _e14 = new InvalidOperationException("e14");
        readonly Exception _e15 = new InvalidOperationException("e15");
        readonly Exception _e16 = new InvalidOperationException("e16");
        readonly Exception _e17 = new InvalidOperationException("e17");
        readonly Exception _e18 = new InvalidOperationException("e18");
        readonly Exception _e19 = new InvalidOperationException("e19");
        readonly Exception _e20 = new InvalidOperationException("e20");
        readonly Exception _e21 = new InvalidOperationException("e21");
        readonly Exception _e22 = new InvalidOperationException("e22");
        readonly Exception _e23 = new InvalidOperationException("e23");
        readonly Exception _e24 = new InvalidOperationException("e24");
        readonly Exception _e25 = new InvalidOperationException("e25");
        readonly Exception _e26 = new InvalidOperationException("e26");
        readonly Exception _e27 = new InvalidOperationException("e27");
        readonly Exception _e28 = new InvalidOperationException("e28");
        readonly Exception _e29 = new InvalidOperationException("e29");
        readonly Exception _e30 = new InvalidOperationException("e30");
        readonly Exception _e31 = new InvalidOperationException("e31");
        readonly Exception _e32 = new InvalidOperationException("e32");
        readonly Exception _e33 = new InvalidOperationException("e33");
        readonly Exception _e34 = new InvalidOperationException("e34");
        readonly Exception _e35 = new InvalidOperationException("e35");
        readonly Exception _e36 = new InvalidOperationException("e36");
        readonly Exception _e37 = new InvalidOperationException("e37");
        readonly Exception _e38 = new InvalidOperationException("e38");
        readonly Exception _e39 = new InvalidOperationException("e39");
        readonly Exception _e40 = new InvalidOperationException("e40");
        readonly Exception _e41 = new InvalidOperationException("e41");
        readonly Exception _e42 = new InvalidOperationException("e42");
        readonly Exception _e43 = new InvalidOperationException("e43");
        readonly Exception _e44 = new InvalidOperationException("e44");
        readonly Exception _e45 = new InvalidOperationException("e45");
        readonly Exception _e46 = new InvalidOperationException("e46");
        readonly Exception _e47 = new InvalidOperationException("e47");

        public override Line Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) { reader.Skip(); return new Line(); }

        public override void Write(Utf8JsonWriter writer, Line value, JsonSerializerOptions options)
        {
            var depth = value.Depth;
            Hold(_e0, depth);
            Hold(_e1, depth);
            Hold(_e2, depth);
            Hold(_e3, depth);
            Hold(_e4, depth);
            Hold(_e5, depth);
            Hold(_e6, depth);
            Hold(_e7, depth);
            Hold(_e8, depth);
            Hold(_e9, depth);
            Hold(_e10, depth);
            Hold(_e11, depth);
            Hold(_e12, depth);
            Hold(_e13, depth);
            Hold(_e14, depth);
            Hold(_e15, depth);
            Hold(_e16, depth);
            Hold(_e17, depth);
            Hold(_e18, depth);
            Hold(_e19, depth);
            Hold(_e20, depth);
            Hold(_e21, depth);
            Hold(_e22, depth);
            Hold(_e23, depth);
            Hold(_e24, depth);
            Hold(_e25, depth);
            Hold(_e26, depth);
            Hold(_e27, depth);
            Hold(_e28, depth);
            Hold(_e29, depth);
            Hold(_e30, depth);
            Hold(_e31, depth);
            Hold(_e32, depth);
            Hold(_e33, depth);
            Hold(_e34, depth);
            Hold(_e35, depth);
            Hold(_e36, depth);
            Hold(_e37, depth);
            Hold(_e38, depth);
            Hold(_e39, depth);
            Hold(_e40, depth);
            Hold(_e41, depth);
            Hold(_e42, depth);
            Hold(_e43, depth);
            Hold(_e44, depth);
            Hold(_e45, depth);
            Hold(_e46, depth);
            Hold(_e47, depth);
            writer.WriteNumberValue(depth);
        }

        static void Hold(Exception ex, int depth)
        {
            try { Deep(ex, depth); } catch (InvalidOperationException) { }
        }

        static int Deep(Exception ex, int depth)
        {
            if (depth <= 1) throw ex;
            return Deep(ex, depth - 1) + depth;
        }
    }

    [JsonSourceGenerationOptions(Converters = new[] { typeof(Hoard) })]
    [JsonSerializable(typeof(Line))]
    internal partial class LineContext : JsonSerializerContext { }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = JsonSerializer.Serialize(new Line { Depth = 20000 }, LineContext.Default.Line);
            return state;
        }
    }
}
