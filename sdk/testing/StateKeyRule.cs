using System;
using System.Collections.Generic;
using System.Text;

namespace EventSourcing.Testing
{
    /// <summary>The service's rules for the keys an event resolves to (src/lanes/state-key-rule.ts and the host's
    /// resolveKeys): why a key cannot be a state key, or <c>null</c>.</summary>
    internal static class StateKeyRule
    {
        public const string UnresolvedKey = "!unresolved";
        public const int MaxKeyBytes = 1024;
        public const int MaxKeysPerEvent = 1024;

        /// <summary>The distinct keys of an IResolveKeys answer, in order; throws as the host answers RESOLVE_FAILED.</summary>
        public static List<string> Distinct(IReadOnlyList<string>? keys)
        {
            var distinct = new List<string>();
            if (keys is null) return distinct;
            if (keys.Count > MaxKeysPerEvent)
                throw new InvalidOperationException($"ResolveKeys returned {keys.Count:N0} keys for one event; the limit is {MaxKeysPerEvent:N0}");
            var seen = new HashSet<string>(StringComparer.Ordinal);
            for (var i = 0; i < keys.Count; i++)
            {
                var key = keys[i] ?? throw new InvalidOperationException($"ResolveKeys returned a null key (at index {i})");
                if (seen.Add(key)) distinct.Add(key);
            }
            return distinct;
        }

        /// <summary>(code, message) when <paramref name="key"/> cannot be a state key.</summary>
        public static (string Code, string Message)? Problem(string key)
        {
            if (key == UnresolvedKey) return ("INVALID_KEY", $"the key '{UnresolvedKey}' is reserved");
            if (key.Length == 0) return ("INVALID_KEY", "a state key must not be empty");
            var bytes = Encoding.UTF8.GetByteCount(key);
            if (bytes > MaxKeyBytes)
                return ("KEY_TOO_LONG", $"a state key is at most {MaxKeyBytes} bytes of UTF-8; this one is {bytes} ({key.Length} UTF-16 units)");
            for (var i = 0; i < key.Length; i++)
            {
                var c = key[i];
                if (c < 0x20 || c == 0x7f) return ("INVALID_KEY", "a state key must not contain control characters");
                if (char.IsHighSurrogate(c) && (i + 1 >= key.Length || !char.IsLowSurrogate(key[i + 1])))
                    return ("INVALID_KEY", "a state key must be valid Unicode (it holds a lone surrogate)");
                if (char.IsLowSurrogate(c) && (i == 0 || !char.IsHighSurrogate(key[i - 1])))
                    return ("INVALID_KEY", "a state key must be valid Unicode (it holds a lone surrogate)");
            }
            return null;
        }
    }
}
