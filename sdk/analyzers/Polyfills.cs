// What the linked host sources (ApiPolicy, ApiVerdict) use from .NET beyond netstandard2.0. Analyzer build only.
using System;
using System.Collections.Generic;

namespace System.Runtime.CompilerServices
{
    /// <summary>Lets the compiler emit init accessors (records) for netstandard2.0.</summary>
    internal static class IsExternalInit { }
}

namespace EventSourcing.Runtime.Compilation
{
    internal static class Polyfills
    {
        public static bool Contains(this string s, string value, StringComparison comparison) => s.IndexOf(value, comparison) >= 0;

        public static void Deconstruct<TKey, TValue>(this KeyValuePair<TKey, TValue> pair, out TKey key, out TValue value)
        {
            key = pair.Key;
            value = pair.Value;
        }

    }
}
