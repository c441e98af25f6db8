// expect: compile-error unsafe code is not allowed
// Attack on the verifier (issue 10): A tenant-made SkipLocalsInitAttribute to read stale stack memory through an uninitialised stackalloc.
// Outcome: The compiler requires unsafe for [SkipLocalsInit] whatever type it binds to; the reserved-namespace rule would refuse the type too.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    [SkipLocalsInit] public static class Stale { public static long Read() { Span<long> s = stackalloc long[64]; return s[63]; } }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = Stale.Read();
            return state;
        }
    }
}
namespace System.Runtime.CompilerServices
{
    [AttributeUsage(AttributeTargets.All)] public sealed class SkipLocalsInitAttribute : Attribute { }
}
