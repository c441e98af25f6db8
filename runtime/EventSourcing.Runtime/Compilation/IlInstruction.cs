using System.Reflection.Metadata;

namespace EventSourcing.Runtime.Compilation;

/// <summary>One decoded IL instruction.</summary>
/// <param name="Offset">Offset of the opcode in the method body.</param>
/// <param name="Next">Offset of the following instruction.</param>
/// <param name="Op">The opcode.</param>
/// <param name="Token">Metadata token operand (0 when the operand is not a metadata token; ldstr's is a user string).</param>
/// <param name="Value">Integer operand (ldc.i4*, ldarg/ldloc index), or the absolute target of a branch.</param>
internal readonly record struct IlInstruction(int Offset, int Next, ILOpCode Op, int Token, long Value);
