// expect: compile-error Vector
// Red team (issue 10): System.Numerics.Vector.LoadUnsafe/StoreUnsafe(ref T, nuint) read and write past the end of any array.
// Not in the reference pack (CS0103 there), but the production image has no Microsoft.NETCore.App.Ref pack, so tenants
// compile against System.Private.CoreLib, which exposes it under the allowed System.Numerics namespace: it compiled and ran.
// Outcome: the SIMD vector types are refused by the policy (ES0001 ... System.Numerics.Vector.LoadUnsafe with CoreLib).
using System.Numerics;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var a = new long[1];
            var v = Vector.LoadUnsafe(ref a[0], (nuint)1000);      // out-of-bounds read
            Vector.StoreUnsafe(v, ref a[0], (nuint)2000);           // out-of-bounds write
            state.Count = v[0];
            return state;
        }
    }
}
