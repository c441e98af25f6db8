// expect: runtime-isolated
// Issue 27 (XxHash), loaded beside another tenant in one executor: the static one-shot XxHash32/64/128/3 over this call's
// bytes, with and without a seed, into a span of its own (TryHash).
// Outcome: a pure function of the bytes and the seed (computed on the stack, no pooled buffer, no process-wide state):
// every call sees the same hashes, and nothing of another tenant's.
using System;
using System.IO.Hashing;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var bytes = System.Text.Encoding.UTF8.GetBytes(e.Data.GetRawText());
            Span<byte> into = stackalloc byte[16];
            var ok = XxHash128.TryHash(bytes, into, out var written, seed: 3);
            state.Value = string.Join(",", Convert.ToHexString(XxHash32.Hash(bytes)), Convert.ToHexString(XxHash64.Hash(bytes, 1)),
                XxHash3.HashToUInt64(bytes), ok + ":" + written + ":" + Convert.ToHexString(into), Convert.ToHexString(XxHash3.Hash(Array.Empty<byte>())));
            state.Count++;
            return state;
        }
    }
}
