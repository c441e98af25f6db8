// expect: compile-error error CS9137
// Attack on the verifier (issue 10): A tenant-made InterceptsLocationAttribute to replace a call site with a method using Unsafe.As.
// Outcome: Interceptors need a compiler feature flag the host never sets; the attribute type is also in a reserved namespace.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }
    public static class Hook { [InterceptsLocation("interceptor.cs", 18, 37)] public static long Leak(this Box b) => Unsafe.As<Box>((object)"text").A; }
    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = new Box().A;
            return state;
        }
    }
}
namespace System.Runtime.CompilerServices
{
    [AttributeUsage(AttributeTargets.Method, AllowMultiple = true)]
    public sealed class InterceptsLocationAttribute : Attribute { public InterceptsLocationAttribute(string filePath, int line, int character) { } }
}
