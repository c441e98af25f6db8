using System.Collections;
using System.Reflection;
using System.Text.RegularExpressions;

namespace EventSourcing.Runtime.Execution;

/// <summary>
/// The runners of the Regex instances an upload keeps (static readonly fields, the generator's cached instances, and
/// elements of the immutable collections static readonly fields may hold), dropped after each call of that upload
/// (issue 28, sec-typeinit; the issue-27 red team's escape-corpus/static-readonly-regex-runner-memory.cs,
/// generator-regex-runner-memory.cs).
///
/// <para>A Regex caches its RegexRunner between matches, and the runner keeps its backtracking arrays at the largest size
/// any match needed: one backtracking match over a long input left 12–18 MiB referenced by the upload's Regex after the
/// call, charged to nobody. Dropping the runner after the call makes those arrays that call's own transient memory; the
/// next match builds a runner again (a few small allocations). The Regex objects themselves (pattern, compiled program)
/// were built by the static initialisers at load and charged then.</para>
///
/// <para>Reflection over one private field (<c>Regex._runner</c>), checked at start by <see cref="SelfTest"/>. Cost: nothing
/// for an upload that keeps no Regex (an empty array); one field write per kept Regex after each of its calls.</para>
/// </summary>
public static class KeptRegexRunners
{
    static readonly FieldInfo Runner = typeof(Regex).GetField("_runner", BindingFlags.Instance | BindingFlags.NonPublic)
                                       ?? throw new InvalidOperationException("Regex._runner not found");

    /// <summary>At most this many elements are looked at per static collection (they were built at load, under the cap).</summary>
    const int MaxElements = 100_000;

    /// <summary>The Regex instances reachable from the static fields of the upload's (non-generic) types, after its static
    /// initialisers ran: directly, or as elements (or dictionary values) of an immutable collection.</summary>
    public static Regex[] Find(IEnumerable<Type?> types)
    {
        var found = new HashSet<Regex>(ReferenceEqualityComparer.Instance);
        foreach (var type in types)
        {
            if (type is null || type.ContainsGenericParameters) continue;
            FieldInfo[] fields;
            try
            {
                fields = type.GetFields(BindingFlags.Static | BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.DeclaredOnly);
            }
            catch (Exception ex) when (ex is TypeLoadException or FileNotFoundException)
            {
                continue;
            }
            foreach (var field in fields)
            {
                if (field.IsLiteral) continue;
                object? value;
                try
                {
                    value = field.GetValue(null);
                }
                catch (Exception ex) when (ex is TargetInvocationException or TypeInitializationException or NotSupportedException or FieldAccessException)
                {
                    continue;
                }
                Add(value, found, nested: true);
            }
        }
        return found.ToArray();
    }

    static void Add(object? value, HashSet<Regex> found, bool nested)
    {
        switch (value)
        {
            case Regex regex:
                found.Add(regex);
                return;
            case null or string:
                return;
            case IEnumerable items when nested:
                var n = 0;
                foreach (var item in items)
                {
                    if (++n > MaxElements) return;
                    if (item is null) continue;
                    var t = item.GetType();
                    if (t.IsGenericType && t.GetGenericTypeDefinition() == typeof(KeyValuePair<,>))
                    {
                        Add(t.GetProperty("Key")!.GetValue(item), found, nested: false);
                        Add(t.GetProperty("Value")!.GetValue(item), found, nested: false);
                    }
                    else Add(item, found, nested: false);
                }
                return;
        }
    }

    /// <summary>After a call of the upload: its kept Regexes forget their runners (and the runners' arrays).</summary>
    public static void AfterCall(Regex[] kept)
    {
        foreach (var regex in kept) Runner.SetValue(regex, null);
    }

    internal static bool HasRunner(Regex regex) => Runner.GetValue(regex) is not null;

    /// <summary>Fails (InvalidOperationException) unless dropping works on this framework: a match leaves a runner, it is
    /// dropped, and matching works again afterwards.</summary>
    public static void SelfTest()
    {
        var regex = new Regex("^(a|b)+$", RegexOptions.CultureInvariant, TimeSpan.FromSeconds(1));
        if (!regex.IsMatch("abab")) throw new InvalidOperationException("Regex self-test did not match");
        if (!HasRunner(regex)) throw new InvalidOperationException("Regex._runner was not found holding the runner after a match");
        AfterCall(new[] { regex });
        if (HasRunner(regex)) throw new InvalidOperationException("Regex._runner was not cleared");
        if (!regex.IsMatch("baba") || regex.IsMatch("abc")) throw new InvalidOperationException("Regex does not match after its runner was dropped");
    }
}
