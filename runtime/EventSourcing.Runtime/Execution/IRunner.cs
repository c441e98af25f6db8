using System.Text.Json;

namespace EventSourcing.Runtime.Execution;

/// <summary>Runs one reducer/projection class; built once per (assemblyId, className) with MakeGenericType,
/// after which calls involve no reflection.</summary>
public interface IRunner
{
    Type ImplementationType { get; }
    Type StateType { get; }
    bool CanResolveKeys { get; }

    /// <summary>Writes <c>{"states":[...],"ok":true}</c> or <c>{"states":[...],"ok":false,"failedIndex":n,"error":{...}}</c>.</summary>
    void ApplyGroup(JsonElement state, JsonElement events, Utf8JsonWriter writer, ApplyOptions options);

    /// <summary>Writes one key (string or null) or <c>{"error":{...}}</c> per event, as array items. A key over
    /// <paramref name="maxKeyLength"/> characters is never written: that event gets KEY_TOO_LONG instead.</summary>
    void ResolveKeys(JsonElement events, Utf8JsonWriter writer, int maxKeyLength);
}
