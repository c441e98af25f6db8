using System;
using System.Collections.Generic;

namespace EventSourcing.Testing
{
    /// <summary>The assembly under test uses what the server's allowlist refuses: an upload of the same sources would fail
    /// to compile with these diagnostics (<c>ES0001</c> forbidden API, <c>ES0002</c> forbidden construct).</summary>
    public sealed class AllowlistViolationException : Exception
    {
        /// <summary>Creates the exception.</summary>
        public AllowlistViolationException(string assemblyName, IReadOnlyList<string> diagnostics)
            : base($"the server would refuse {assemblyName} (its allowlist check; docs/csharp.md, \"What your code may use\"):\n  "
                + string.Join("\n  ", diagnostics)
                + "\n(the reducer or projection under test must be in the project you upload, not in the test project)")
        {
            Diagnostics = diagnostics;
        }

        /// <summary>Each refusal, as <c>file(line,col): error CODE: message</c> or <c>error CODE: message</c>.</summary>
        public IReadOnlyList<string> Diagnostics { get; }
    }
}
