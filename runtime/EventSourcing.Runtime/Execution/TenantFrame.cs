namespace EventSourcing.Runtime.Execution;

/// <summary>One frame of a tenant exception's stack: its method, and the archive's file and line when the embedded PDB
/// names them (null otherwise, e.g. a compiler-generated method without a sequence point).</summary>
public sealed record TenantFrame(string Method, string? File, int? Line);
