using System.Reflection.Metadata;
using System.Reflection.PortableExecutable;

namespace EventSourcing.Runtime.Compilation;

/// <summary>
/// One verification of one assembly (<see cref="AssemblyVerifier.Verify"/>): decodes every method body once, then runs the
/// checks, each in the file of its concern: references against the allowlists (AssemblyWalker.References), the tenant's own
/// definitions (.Definitions, .Derivation, .GenericExpansion), the IL of every method body (.MethodBodies); display names for
/// messages (.Names) and the de-duplicated report (.Reporting). Holds the verdicts computed once per handle.
/// </summary>
internal sealed partial class AssemblyWalker
{
    readonly PEReader _pe;
    readonly MetadataReader _md;
    public readonly List<Violation> Violations = new();
    readonly HashSet<string> _seen = new(StringComparer.Ordinal);

    // Verdicts by handle, computed once.
    readonly Dictionary<TypeReferenceHandle, (string Name, ApiVerdict Verdict)> _typeRefs = new();
    readonly Dictionary<MemberReferenceHandle, MemberUse> _memberRefs = new();
    // Denied references already reported at a location (so the location-less final pass does not repeat them).
    readonly HashSet<TypeReferenceHandle> _reportedTypes = new();
    readonly HashSet<MemberReferenceHandle> _reportedMembers = new();

    readonly Dictionary<MethodDefinitionHandle, (MethodBodyBlock Block, IlInstruction[] Il)> _bodies = new();
    CompilerPatterns _patterns = null!;

    public AssemblyWalker(PEReader pe, MetadataReader md)
    {
        _pe = pe;
        _md = md;
    }

    public void Run()
    {
        CheckReferences();
        foreach (var h in _md.TypeReferences) _typeRefs[h] = (TypeRefName(h), TypeRefVerdict(h));
        foreach (var h in _md.MemberReferences) _memberRefs[h] = MemberVerdict(h);

        foreach (var th in _md.TypeDefinitions)
        {
            foreach (var mh in _md.GetTypeDefinition(th).GetMethods())
            {
                var method = _md.GetMethodDefinition(mh);
                if (method.RelativeVirtualAddress == 0) continue;
                var block = _pe.GetMethodBody(method.RelativeVirtualAddress);
                _bodies[mh] = (block, IlDecoder.Decode(block.GetILReader()));
            }
        }
        _patterns = new CompilerPatterns(_md, _bodies);

        CheckDefinitions();
        CheckGenericExpansion();
        CheckMethodBodies();
        CheckAttributeTypeArguments();

        ReportUnlocatedReferences();
    }
}
