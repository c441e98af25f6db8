// expect: compile-error forbidden API: System.IO.FileInfo
// typeof(X) inside an attribute is stored as a type-name string, not a type reference: the serializer would instantiate it.
using System.Text.Json.Serialization;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState
    {
        [JsonConverter(typeof(System.IO.FileInfo))]
        public string Value { get; set; } = "";
        public long Count { get; set; }
    }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            return state;
        }
    }
}
