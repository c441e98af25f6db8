using System.Reflection;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;

namespace EventSourcing.Runtime.Compilation;

/// <summary>
/// <c>new T()</c> for a type parameter <c>T : new()</c> (or <c>T : struct</c>) is lowered by Roslyn to
/// <c>Activator.CreateInstance&lt;T&gt;()</c>. That one call is trusted, and only when it is exactly
/// <c>System.Activator::CreateInstance&lt;1&gt;()!!0</c> instantiated with a type parameter (of the calling method or
/// of its declaring type) that carries the <c>new()</c> or <c>struct</c> constraint: it then does nothing
/// <c>new T()</c> does not — run T's public parameterless constructor, which the runtime's type loader guarantees exists
/// for every instantiation, and whose T is named (and checked by the policy) wherever the instantiation is written.
/// <c>Activator.CreateInstance&lt;Concrete&gt;()</c>, <c>CreateInstance(Type)</c> and the other overloads stay refused.
/// </summary>
internal static class NewConstraintLowering
{
    const GenericParameterAttributes Constructible =
        GenericParameterAttributes.DefaultConstructorConstraint | GenericParameterAttributes.NotNullableValueTypeConstraint;

    public static bool IsTrusted(MetadataReader md, MethodDefinitionHandle caller, int token)
    {
        var handle = MetadataTokens.EntityHandle(token);
        if (handle.Kind != HandleKind.MethodSpecification) return false;
        var spec = md.GetMethodSpecification((MethodSpecificationHandle)handle);
        if (spec.Method.Kind != HandleKind.MemberReference) return false;
        var member = md.GetMemberReference((MemberReferenceHandle)spec.Method);
        if (md.GetString(member.Name) != "CreateInstance") return false;

        // The member: generic arity 1, no parameters, returns !!0.
        var sig = md.GetBlobReader(member.Signature);
        var header = sig.ReadSignatureHeader();
        if (header.Kind != SignatureKind.Method || !header.IsGeneric || header.IsInstance || sig.ReadCompressedInteger() != 1) return false;
        if (sig.ReadCompressedInteger() != 0) return false;
        if (sig.ReadSignatureTypeCode() != SignatureTypeCode.GenericMethodParameter || sig.ReadCompressedInteger() != 0 || sig.RemainingBytes != 0) return false;

        // The instantiation: one type parameter of the caller or of its declaring type.
        var inst = md.GetBlobReader(spec.Signature);
        if (inst.ReadSignatureHeader().Kind != SignatureKind.MethodSpecification || inst.ReadCompressedInteger() != 1) return false;
        var code = inst.ReadSignatureTypeCode();
        if (code is not (SignatureTypeCode.GenericMethodParameter or SignatureTypeCode.GenericTypeParameter)) return false;
        var index = inst.ReadCompressedInteger();
        if (inst.RemainingBytes != 0) return false;

        var method = md.GetMethodDefinition(caller);
        var parameters = code == SignatureTypeCode.GenericMethodParameter
            ? method.GetGenericParameters()
            : md.GetTypeDefinition(method.GetDeclaringType()).GetGenericParameters();
        if (index >= parameters.Count) return false;
        return (md.GetGenericParameter(parameters[index]).Attributes & Constructible) != 0;
    }
}
