// expect: compile-error System.Security.Cryptography.HashAlgorithm (security APIs are not allowed)
// Issue 22, red team: HashAlgorithm.ComputeHash(Stream) and TransformBlock call HashCore with rented buffers, and TryHashFinal with a
// destination span. Outcome: System.Security.Cryptography is not in the reference set at all (CS0234, with the policy's reason), and
// HashAlgorithm is not on the derivation list either.
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
