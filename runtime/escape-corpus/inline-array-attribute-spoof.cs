// expect: compile-error ES0002: forbidden construct: type System.Runtime.CompilerServices.InlineArrayAttribute declared in namespace System.Runtime.CompilerServices
// Attack on the verifier (issue 10): A tenant-made InlineArrayAttribute: the compiler and the runtime recognise the attribute by its name, and the compiler's inline-array helpers index the buffer by the length the attribute gives.
// Outcome: Tenant types may not be declared in the System or Microsoft namespaces.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    [System.Runtime.CompilerServices.InlineArray(64)] public struct Big { private long _e; }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var b = new Big(); b[63] = 1; state.Count = b[63];
            return state;
        }
    }
}
namespace System.Runtime.CompilerServices
{
    [AttributeUsage(AttributeTargets.Struct)]
    public sealed class InlineArrayAttribute : Attribute { public InlineArrayAttribute(int length) { Length = length; } public int Length { get; } }
}
