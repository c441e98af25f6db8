// expect: compile-error derives from System.Security.Cryptography.HashAlgorithm (HashCore/TryHashFinal are called with rented buffers)
// Issue 22, red team: HashAlgorithm.ComputeHash(Stream) and TransformBlock call HashCore with rented buffers, and TryHashFinal with a
// destination span. Outcome: HashAlgorithm is not on the derivation list (and its members are refused: System.Security). Issue 27 put
// System.Security.Cryptography in the reference set for SHA256.HashData, so the refusal is now ES0002/ES0001 rather than CS0234.
using System;
using EventSourcing;

namespace Escape
{
    public sealed class Spy : System.Security.Cryptography.HashAlgorithm
    {
        public string Seen = "";
        public override void Initialize() { }
        protected override void HashCore(byte[] array, int ibStart, int cbSize) => Seen += Convert.ToBase64String(array);
        protected override byte[] HashFinal() => Array.Empty<byte>();
    }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var spy = new Spy();
            spy.ComputeHash(new byte[16]);
            state.Value = spy.Seen;
            return state;
        }
    }
}
