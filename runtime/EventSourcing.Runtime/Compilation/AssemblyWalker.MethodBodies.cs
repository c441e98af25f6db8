using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using F = EventSourcing.Runtime.Compilation.SignatureProviders.Formatter;

namespace EventSourcing.Runtime.Compilation;

internal sealed partial class AssemblyWalker
{
    const string InterpolationHandler = "System.Runtime.CompilerServices.DefaultInterpolatedStringHandler";
    const string HandlerCopy = "copies of a DefaultInterpolatedStringHandler share the buffer it rented from the process-wide ArrayPool and would return it twice, so that later renters (the host included) share one array";

    /// <summary>
    /// The compiler only ever uses a DefaultInterpolatedStringHandler in place (ldloca, by reference). A copy — a
    /// ldloc/stloc of it, ldobj/stobj/cpobj, a by-value parameter or return, a field, a generic argument — lets two
    /// handlers return the same pooled array.
    /// </summary>
    void CheckInterpolationHandlerCopies()
    {
        for (var row = 1; row <= _md.GetTableRowCount(TableIndex.TypeSpec); row++)
            if (_md.GetTypeSpecification(MetadataTokens.TypeSpecificationHandle(row)).DecodeSignature(F.Instance, null).Contains(InterpolationHandler, StringComparison.Ordinal))
                Report("ES0002", $"forbidden construct: {InterpolationHandler} as a generic argument ({HandlerCopy})", default, -1, null);
        for (var row = 1; row <= _md.GetTableRowCount(TableIndex.MethodSpec); row++)
            if (_md.GetMethodSpecification(MetadataTokens.MethodSpecificationHandle(row)).DecodeSignature(F.Instance, null).Any(a => a.Contains(InterpolationHandler, StringComparison.Ordinal)))
                Report("ES0002", $"forbidden construct: {InterpolationHandler} as a generic argument ({HandlerCopy})", default, -1, null);
        foreach (var th in _md.TypeDefinitions)
        {
            var type = _md.GetTypeDefinition(th);
            foreach (var fh in type.GetFields())
                if (_md.GetFieldDefinition(fh).DecodeSignature(F.Instance, null).Contains(InterpolationHandler, StringComparison.Ordinal))
                    Report("ES0002", $"forbidden construct: field {TypeDefName(th)}.{_md.GetString(_md.GetFieldDefinition(fh).Name)} of type DefaultInterpolatedStringHandler ({HandlerCopy})", default, -1, null);
            foreach (var mh in type.GetMethods())
            {
                var sig = _md.GetMethodDefinition(mh).DecodeSignature(F.Instance, null);
                if (sig.ReturnType == InterpolationHandler || sig.ParameterTypes.Contains(InterpolationHandler))
                    Report("ES0002", $"forbidden construct: DefaultInterpolatedStringHandler passed or returned by value ({HandlerCopy})", mh, 0, $"{TypeDefName(th)}.{_md.GetString(_md.GetMethodDefinition(mh).Name)}");
            }
        }
    }

    HashSet<long> HandlerLocals(MethodBodyBlock block)
    {
        var found = new HashSet<long>();
        if (block.LocalSignature.IsNil) return found;
        var locals = _md.GetStandaloneSignature(block.LocalSignature).DecodeLocalSignature(F.Instance, null);
        for (var i = 0; i < locals.Length; i++)
            if (locals[i] == InterpolationHandler) found.Add(i);
        return found;
    }

    void CheckMethodBodies()
    {
        CheckInterpolationHandlerCopies();
        foreach (var (mh, (block, il)) in _bodies)
        {
            var method = _md.GetMethodDefinition(mh);
            var where = $"{TypeDefName(method.GetDeclaringType())}.{_md.GetString(method.Name)}";
            var handlerLocals = HandlerLocals(block);
            for (var i = 0; i < il.Length; i++)
            {
                var op = il[i].Op;
                var copiesHandler = op switch
                {
                    ILOpCode.Ldloc or ILOpCode.Ldloc_s or (>= ILOpCode.Ldloc_0 and <= ILOpCode.Ldloc_3)
                        or ILOpCode.Stloc or ILOpCode.Stloc_s or (>= ILOpCode.Stloc_0 and <= ILOpCode.Stloc_3) => handlerLocals.Contains(il[i].Value),
                    ILOpCode.Ldobj or ILOpCode.Stobj or ILOpCode.Cpobj => F.TypeName(_md, MetadataTokens.EntityHandle(il[i].Token)) == InterpolationHandler,
                    _ => false,
                };
                if (copiesHandler)
                    Report("ES0002", $"forbidden construct: copy of a DefaultInterpolatedStringHandler ({HandlerCopy})", mh, il[i].Offset, where);
                switch (op)
                {
                    case ILOpCode.Calli:
                        Report("ES0001", "forbidden API: calli (function pointers are not allowed)", mh, il[i].Offset, where);
                        continue;
                    case ILOpCode.Jmp or ILOpCode.Arglist or ILOpCode.Mkrefany or ILOpCode.Refanyval or ILOpCode.Refanytype:
                        Report("ES0001", $"forbidden API: IL instruction {op.ToString().ToLowerInvariant()} (not allowed)", mh, il[i].Offset, where);
                        continue;
                }
                if (il[i].Token != 0) CheckToken(il[i].Token, mh, i, il[i].Offset, where);
            }
        }
    }

    void CheckToken(int token, MethodDefinitionHandle method, int index, int offset, string where)
    {
        var handle = MetadataTokens.EntityHandle(token);
        switch (handle.Kind)
        {
            case HandleKind.MethodSpecification:
                var spec = _md.GetMethodSpecification((MethodSpecificationHandle)handle);
                if (spec.Method.Kind == HandleKind.MemberReference)
                    CheckMemberUse((MemberReferenceHandle)spec.Method, method, index, offset, where);
                CheckTypeRefsInBlob(handle, method, offset, where);
                break;
            case HandleKind.MemberReference:
                CheckMemberUse((MemberReferenceHandle)handle, method, index, offset, where);
                break;
            case HandleKind.TypeReference:
                CheckTypeUse((TypeReferenceHandle)handle, method, offset, where);
                break;
            case HandleKind.TypeSpecification:
                CheckTypeRefsInBlob(handle, method, offset, where);
                break;
        }
    }

    void CheckMemberUse(MemberReferenceHandle h, MethodDefinitionHandle method, int index, int offset, string where)
    {
        var use = _memberRefs[h];
        var member = _md.GetMemberReference(h);
        // The types in the member's own signature (e.g. MethodBase in Exception.TargetSite) are used here too.
        var signatureTypes = new SignatureProviders.TypeRefCollector();
        if (member.GetKind() == MemberReferenceKind.Method) member.DecodeMethodSignature(signatureTypes, null);
        else member.DecodeFieldSignature(signatureTypes, null);
        if (use.Verdict.Access == ApiAccess.Denied
            || (use.Verdict.Access == ApiAccess.CompilerOnly && !_patterns.IsTrustedUse(method, index, use.TypeKey, use.Member)))
        {
            Report("ES0001", $"forbidden API: {use.Name} ({use.Verdict.Reason})", method, offset, where, use.Verdict.Reason);
            _reportedMembers.Add(h);
            MarkParentReported(h);
            _reportedTypes.UnionWith(signatureTypes.Found); // part of the same refusal
            return;
        }
        if (member.Parent.Kind == HandleKind.TypeReference) CheckTypeUse((TypeReferenceHandle)member.Parent, method, offset, where);
        else if (member.Parent.Kind == HandleKind.TypeSpecification) CheckTypeRefsInBlob(member.Parent, method, offset, where);
        foreach (var th in signatureTypes.Found) CheckTypeUse(th, method, offset, where);
    }

    /// <summary>A denied type is reported once per method that uses it (Report de-duplicates within a method).</summary>
    void CheckTypeUse(TypeReferenceHandle h, MethodDefinitionHandle method, int offset, string where)
    {
        var (name, verdict) = _typeRefs[h];
        if (verdict.Access != ApiAccess.Denied) return;
        _reportedTypes.Add(h);
        Report("ES0001", $"forbidden API: {name} ({verdict.Reason})", method, offset, where, verdict.Reason);
    }

    /// <summary>Finds type references inside a generic instantiation (TypeSpec / MethodSpec signature) to attribute a location to them.</summary>
    void CheckTypeRefsInBlob(EntityHandle specHandle, MethodDefinitionHandle method, int offset, string where)
    {
        var collector = new SignatureProviders.TypeRefCollector();
        try
        {
            if (specHandle.Kind == HandleKind.TypeSpecification)
                _md.GetTypeSpecification((TypeSpecificationHandle)specHandle).DecodeSignature(collector, null);
            else if (specHandle.Kind == HandleKind.MethodSpecification)
                _md.GetMethodSpecification((MethodSpecificationHandle)specHandle).DecodeSignature(collector, null);
        }
        catch (BadImageFormatException)
        {
            return;
        }
        foreach (var th in collector.Found)
        {
            if (_typeRefs.ContainsKey(th)) CheckTypeUse(th, method, offset, where);
        }
    }
}
