// expect: compile-error ES0002: forbidden construct: Escape.Spy derives from System.Text.Encodings.Web.JavaScriptEncoder
// Issue 22, red team: JsonSerializerOptions.Encoder / JsonWriterOptions.Encoder take any JavaScriptEncoder; Utf8JsonWriter calls its
// FindFirstCharacterToEncodeUtf8 and EncodeUtf8(source, destination…) with a destination it rented from the shared pool. The same
// class of door as finding 1, through System.Text.Encodings.Web.
// Outcome: TextEncoder and JavaScriptEncoder are not on the derivation list.
using System;
using System.Text;
using System.Text.Encodings.Web;
using System.Text.Json;
using EventSourcing;

namespace Escape
{
    // A concrete encoder must override FindFirstCharacterToEncode(char*, int) and TryEncodeUnicodeScalar(int, char*, int, out int):
    // unsafe code, refused on its own (CS0227). An abstract one, whose concrete subclass would come from elsewhere, is refused here.
    public abstract class Spy : JavaScriptEncoder
    {
        public override int MaxOutputCharactersPerInputCharacter => 1;
        public override bool WillEncode(int unicodeScalar) => true;
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = typeof(Spy).Name + JsonSerializer.Serialize(e.EventId, new JsonSerializerOptions { Encoder = JavaScriptEncoder.Default });
            return state;
        }
    }
}
