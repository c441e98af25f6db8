// expect: compile-error ES0001: forbidden API: System.IO.FileInfo in an attribute argument
// Attack on the verifier (issue 10): typeof of denied types in attribute arguments ([JsonDerivedType], [JsonConverter]) that the serializer would instantiate.
// Outcome: Type names in attribute blobs are checked like type references.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;
using System.Text.Json.Serialization;
namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    [JsonDerivedType(typeof(System.IO.FileInfo))] public class Shape { }
    [JsonConverter(typeof(JsonStringEnumConverter<System.IO.FileAccess>))] public enum Kind { A }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = nameof(Shape) + Kind.A;
            return state;
        }
    }
}
