// expect: compile-error ES0002: forbidden construct: type System.Runtime.CompilerServices.IgnoresAccessChecksToAttribute
// Attack on the verifier (issue 10): A tenant-made IgnoresAccessChecksToAttribute (honoured by the runtime by name) applied to the assembly.
// Outcome: Tenant types may not be declared in the System or Microsoft namespaces.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using EventSourcing;
[assembly: System.Runtime.CompilerServices.IgnoresAccessChecksTo("System.Private.CoreLib")]

namespace Escape
{
    public sealed class Box { public long A; }
    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Count = 1;
            return state;
        }
    }
}
namespace System.Runtime.CompilerServices
{
    [AttributeUsage(AttributeTargets.Assembly, AllowMultiple = true)]
    public sealed class IgnoresAccessChecksToAttribute : Attribute { public IgnoresAccessChecksToAttribute(string assemblyName) { } }
}
