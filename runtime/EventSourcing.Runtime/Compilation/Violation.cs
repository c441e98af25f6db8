using System.Reflection.Metadata;

namespace EventSourcing.Runtime.Compilation;

/// <summary>One refusal found in an emitted assembly.</summary>
/// <param name="Code">ES0001 (forbidden API) or ES0002 (forbidden construct).</param>
/// <param name="Message">e.g. "forbidden API: System.IO.File.ReadAllText (file system access is not allowed)".</param>
/// <param name="Method">The method whose IL uses it, when known.</param>
/// <param name="IlOffset">The IL offset within <paramref name="Method"/>, when known.</param>
/// <param name="Context">"in Type.Method" style context for messages without a source location.</param>
/// <param name="Reason">The policy reason, for de-duplicating follow-on reports.</param>
/// <param name="TypeName">Metadata name (Ns.Outer+Inner) of the type the violation is about, to locate it at the type's declaration
/// when the method has no source location (or there is no method).</param>
/// <param name="MemberName">Metadata name of the member of <paramref name="TypeName"/> it is about (a field), to locate it at that
/// member's declaration (an auto-property's backing field at the property).</param>
public sealed record Violation(string Code, string Message, MethodDefinitionHandle Method, int IlOffset, string? Context, string? Reason = null, string? TypeName = null, string? MemberName = null);
