using System.Reflection.Emit;
using System.Reflection.Metadata;

namespace EventSourcing.Runtime.Compilation;

/// <summary>Decodes a method body into instructions, with the operand sizes taken from the runtime's own opcode table.</summary>
internal static class IlDecoder
{
    static readonly Dictionary<int, OperandType> Operands = typeof(OpCodes).GetFields()
        .Select(f => (OpCode)f.GetValue(null)!)
        .ToDictionary(o => (int)(ushort)o.Value, o => o.OperandType);

    /// <exception cref="BadImageFormatException">an unknown opcode or a truncated operand.</exception>
    public static IlInstruction[] Decode(BlobReader il)
    {
        var list = new List<IlInstruction>();
        while (il.RemainingBytes > 0)
        {
            var offset = il.Offset;
            int code = il.ReadByte();
            if (code == 0xFE) code = 0xFE00 | il.ReadByte();
            if (!Operands.TryGetValue(code, out var operand)) throw new BadImageFormatException($"unknown IL opcode 0x{code:X} at IL_{offset:x4}");
            var op = (ILOpCode)code;
            int token = 0;
            long value = ShortForm(op);
            switch (operand)
            {
                case OperandType.InlineNone:
                    break;
                case OperandType.ShortInlineI:
                    value = op == ILOpCode.Ldc_i4_s ? il.ReadSByte() : il.ReadByte(); // unaligned./no. take an unsigned byte
                    break;
                case OperandType.ShortInlineVar:
                    value = il.ReadByte();
                    break;
                case OperandType.ShortInlineBrTarget:
                {
                    var delta = il.ReadSByte();
                    value = il.Offset + delta;
                    break;
                }
                case OperandType.InlineVar:
                    value = il.ReadUInt16();
                    break;
                case OperandType.InlineI:
                    value = il.ReadInt32();
                    break;
                case OperandType.InlineBrTarget:
                {
                    var delta = il.ReadInt32();
                    value = il.Offset + delta;
                    break;
                }
                case OperandType.ShortInlineR:
                    il.ReadSingle();
                    break;
                case OperandType.InlineI8:
                    value = il.ReadInt64();
                    break;
                case OperandType.InlineR:
                    il.ReadDouble();
                    break;
                case OperandType.InlineString:
                    il.ReadInt32(); // a user-string token, not a metadata entity
                    break;
                case OperandType.InlineSwitch:
                {
                    var n = il.ReadUInt32();
                    if (n > il.RemainingBytes / 4) throw new BadImageFormatException($"truncated switch at IL_{offset:x4}");
                    for (var i = 0; i < n; i++) il.ReadInt32();
                    break;
                }
                case OperandType.InlineField:
                case OperandType.InlineMethod:
                case OperandType.InlineSig:
                case OperandType.InlineTok:
                case OperandType.InlineType:
                    token = il.ReadInt32();
                    break;
                default:
                    throw new BadImageFormatException($"unsupported operand type {operand} at IL_{offset:x4}");
            }
            list.Add(new IlInstruction(offset, il.Offset, op, token, value));
        }
        return list.ToArray();
    }

    /// <summary>The constant of ldc.i4.m1 … ldc.i4.8 and the index of ldarg.0-3 / ldloc.0-3 / stloc.0-3, else 0.</summary>
    static long ShortForm(ILOpCode op) => op switch
    {
        ILOpCode.Ldc_i4_m1 => -1,
        >= ILOpCode.Ldc_i4_0 and <= ILOpCode.Ldc_i4_8 => op - ILOpCode.Ldc_i4_0,
        >= ILOpCode.Ldarg_0 and <= ILOpCode.Ldarg_3 => op - ILOpCode.Ldarg_0,
        >= ILOpCode.Ldloc_0 and <= ILOpCode.Ldloc_3 => op - ILOpCode.Ldloc_0,
        >= ILOpCode.Stloc_0 and <= ILOpCode.Stloc_3 => op - ILOpCode.Stloc_0,
        _ => 0,
    };

    /// <summary>True for ldc.i4, ldc.i4.s and ldc.i4.m1 … ldc.i4.8.</summary>
    public static bool IsLoadInt32(ILOpCode op) =>
        op is ILOpCode.Ldc_i4 or ILOpCode.Ldc_i4_s or ILOpCode.Ldc_i4_m1 or (>= ILOpCode.Ldc_i4_0 and <= ILOpCode.Ldc_i4_8);

    /// <summary>True for ldarg.0 and its long forms with index 0.</summary>
    public static bool IsLoadThis(IlInstruction i) =>
        i.Op == ILOpCode.Ldarg_0 || (i.Op is ILOpCode.Ldarg_s or ILOpCode.Ldarg && i.Value == 0);
}
