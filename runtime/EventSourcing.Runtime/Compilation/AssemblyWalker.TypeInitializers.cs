using System.Reflection.Metadata;

namespace EventSourcing.Runtime.Compilation;

internal sealed partial class AssemblyWalker
{
    /// <summary>
    /// The runtime keeps the exception of a static constructor that threw, per type (per instantiation of a generic type),
    /// and throws that same object again on every later use of the type: each throw rewrites its stack trace, which the
    /// next call reads back (through StackTrace, ToString() or string interpolation: no API refusal can close it), so a
    /// failed static constructor is memory carried from call to call (issue 27 red team,
    /// escape-corpus/cross-call-type-init-exception-*.cs). The host runs every non-generic type's static constructor at
    /// load and refuses the load when one throws (AssemblyRegistry), so the exception is never kept; a generic type's runs
    /// at its first use inside some call, where no load can see it: refused here, unless it is exactly the compiler's
    /// closure singleton (<see cref="CompilerPatterns.IsSingletonInitializer"/>). A generic type may hold no static field
    /// of its own (CheckGenericStatics), so a static constructor of its own has nothing to initialise: nothing useful is lost.
    /// </summary>
    void CheckGenericTypeInitializer(TypeDefinitionHandle th, TypeDefinition type, string typeName)
    {
        if (type.GetGenericParameters().Count == 0) return;
        // A static field of its own is refused already (CheckGenericStatics, CheckStaticFields), at its declaration.
        foreach (var fh in type.GetFields())
        {
            var field = _md.GetFieldDefinition(fh);
            if ((field.Attributes & System.Reflection.FieldAttributes.Static) != 0 && (field.Attributes & System.Reflection.FieldAttributes.Literal) == 0
                && _patterns.TrustedStaticField(fh) is null)
                return;
        }
        foreach (var mh in type.GetMethods())
        {
            var method = _md.GetMethodDefinition(mh);
            if (_md.GetString(method.Name) != ".cctor" || _patterns.IsSingletonInitializer(mh)) continue;
            var display = System.Text.RegularExpressions.Regex.Replace(typeName, "`[0-9]+", "")
                          + "<" + string.Join(", ", type.GetGenericParameters().Select(p => _md.GetString(_md.GetGenericParameter(p).Name))) + ">";
            Report("ES0002", $"forbidden construct: static constructor of the generic type {display} (it runs inside a call, at the type's first use, where the host cannot run it ahead at load; if it throws, the runtime keeps its exception from one call to the next; move it to a non-generic type)",
                default, -1, null, typeName: MetadataTypeName(th), memberName: ".cctor");
        }
    }
}
