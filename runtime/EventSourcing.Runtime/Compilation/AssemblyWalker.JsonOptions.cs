using System.Reflection.Metadata;

namespace EventSourcing.Runtime.Compilation;

internal sealed partial class AssemblyWalker
{
    /// <summary>
    /// A static readonly field whose type is exactly JsonSerializerOptions (not an array or a collection of them): the host makes
    /// it read-only right after the static initialisers ran at load (Execution.StaticOptionsFreezer), which it can only do for
    /// the field's own value.
    /// </summary>
    bool IsJsonOptionsField(FieldDefinition field)
    {
        var blob = _md.GetBlobReader(field.Signature);
        if (blob.ReadSignatureHeader().Kind != SignatureKind.Field) return false;
        if (blob.ReadSignatureTypeCode() != SignatureTypeCode.TypeHandle) return false;
        return ComparerName(blob.ReadTypeHandle()) == "System.Text.Json.JsonSerializerOptions";
    }
}
