using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;

namespace EventSourcing.Testing
{
    /// <summary>The serializer options the host gives each loaded tenant assembly
    /// (runtime/EventSourcing.Runtime/Execution/LoadedAssembly.cs): web defaults (camelCase, case-insensitive reads,
    /// numbers from strings), relaxed escaping, the default reflection resolver. Keep the two in step.</summary>
    public static class HostJson
    {
        /// <summary>A new options instance as the host makes one (the host makes one per assembly; so does each runner here).</summary>
        public static JsonSerializerOptions CreateOptions() => new(JsonSerializerDefaults.Web)
        {
            Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
            TypeInfoResolver = new DefaultJsonTypeInfoResolver(),
        };
    }
}
