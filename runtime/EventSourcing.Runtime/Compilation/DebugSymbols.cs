using Microsoft.CodeAnalysis.Emit;

namespace EventSourcing.Runtime.Compilation;

/// <summary>How a tenant assembly carries its debug symbols: a portable PDB embedded in the image, so a runtime failure
/// can name the tenant's file and line (Execution/TenantFrames) without a second file to load. Sequence points only:
/// the IL is the same as without symbols, and the sources are not embedded (the paths are the archive's own).</summary>
public static class DebugSymbols
{
    public static EmitOptions EmitOptions { get; } = new(debugInformationFormat: DebugInformationFormat.Embedded);
}
