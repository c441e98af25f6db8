namespace EventSourcing.Runtime.Compilation;

/// <summary>How a referenced type or member may be used by tenant code.</summary>
public enum ApiAccess
{
    /// <summary>Usable anywhere.</summary>
    Allowed,

    /// <summary>Not usable at all.</summary>
    Denied,

    /// <summary>Usable only in the exact shapes the compiler itself emits (see <see cref="CompilerPatterns"/>), e.g.
    /// <c>Unsafe.As</c> inside Roslyn's inline-array helpers. Never by a type's name: code in lambdas, local
    /// functions, iterators and other generated types is tenant code.</summary>
    CompilerOnly,
}
