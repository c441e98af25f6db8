using System.Reflection;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;

namespace EventSourcing.Runtime.Execution;

/// <summary>
/// Issue 27: a <c>static readonly JsonSerializerOptions</c> field is allowed (the IL check lets it through only as the field's own
/// type, never inside a collection), because the host makes it read-only right after the type's static initialiser ran at load,
/// before any call: a later call that sets a property or adds a converter gets an InvalidOperationException, so no call can
/// leave anything in it for the next. What else it holds is the tenant's own and stateless: converters and naming policies may
/// have no mutable fields (DerivationPolicy), a resolver is a generated context. Its metadata cache fills with this assembly's
/// types only (a resolver of its own, so the cache is not shared with another tenant's equal options) and goes with the
/// assembly's load context. Its growth (metadata for the types it serializes, a bounded set) is not charged to the tenant.
/// </summary>
public static class StaticOptionsFreezer
{
    public static void Freeze(Type type)
    {
        foreach (var field in type.GetFields(BindingFlags.Static | BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.DeclaredOnly))
        {
            if (!field.IsInitOnly || field.FieldType != typeof(JsonSerializerOptions)) continue;
            if (field.GetValue(null) is not JsonSerializerOptions { IsReadOnly: false } options) continue;
            // A resolver of its own: with the default one (a process-wide singleton), System.Text.Json shares one metadata cache
            // among all read-only options with equal settings (TrackedCachingContexts), so another tenant's equal static options
            // would hold this tenant's types, and keep its unloaded load context alive.
            options.TypeInfoResolver ??= new DefaultJsonTypeInfoResolver();
            options.MakeReadOnly();
        }
    }
}
