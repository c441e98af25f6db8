using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;

namespace EventSourcing.Runtime.Compilation;

internal sealed partial class AssemblyWalker
{
    /// <summary>Whatever was not seen in IL (signatures, attributes, MethodImpls…) is reported without a location, unless
    /// something was already reported for the same reason (e.g. MethodInfo after Type.GetMethod).</summary>
    void ReportUnlocatedReferences()
    {
        var reasons = Violations.Select(v => v.Reason).ToHashSet(StringComparer.Ordinal);
        foreach (var (h, use) in _memberRefs)
        {
            if (use.Verdict.Access != ApiAccess.Denied || _reportedMembers.Contains(h)) continue;
            MarkParentReported(h);
            if (reasons.Add(use.Verdict.Reason!)) Report("ES0001", $"forbidden API: {use.Name} ({use.Verdict.Reason})", default, -1, null, use.Verdict.Reason);
        }
        foreach (var (h, (name, verdict)) in _typeRefs)
        {
            if (verdict.Access != ApiAccess.Denied || _reportedTypes.Contains(h)) continue;
            if (reasons.Add(verdict.Reason!)) Report("ES0001", $"forbidden API: {name} ({verdict.Reason})", default, -1, null, verdict.Reason);
        }
    }

    void Report(string code, string message, MethodDefinitionHandle method, int offset, string? where, string? reason = null, string? typeName = null, string? memberName = null)
    {
        // The same API used several times in one method is reported once for that method.
        var key = message + "|" + (method.IsNil ? "" : MetadataTokens.GetToken(method).ToString());
        if (!_seen.Add(key)) return;
        Violations.Add(new Violation(code, message, method, offset, where, reason, typeName, memberName));
    }
}
